package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestNameListTakesNamesLiterally: queue names with quotes and commas can
// be named; commas separate unless escaped.
func TestNameListTakesNamesLiterally(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--queue", "emails,default"}, "emails|default"},
		{[]string{"--queue", "emails", "--queue", "default"}, "emails|default"},
		{[]string{"--queue", `say "hi"`}, `say "hi"`},
		{[]string{"--queue", `a\,b,c`}, "a,b|c"},
		{[]string{"--queue", `back\\slash`}, `back\slash`},
		{[]string{"--queue", `not\escape`}, `not\escape`},
	} {
		var got []string
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.Var(nameList{&got}, "queue", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if strings.Join(got, "|") != tc.want {
			t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
		}
		// String round-trips through Set.
		var again []string
		if err := (nameList{&again}).Set(nameList{&got}.String()); err != nil || strings.Join(again, "|") != tc.want {
			t.Errorf("%v: String %q does not round-trip: %q", tc.args, nameList{&got}.String(), again)
		}
	}
}
