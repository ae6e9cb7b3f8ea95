package payload

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHasTags(t *testing.T) {
	raw := []byte(`{"displayName":"App\\Jobs\\X","tags":["App\\Models\\Order:1001","urgent",7],"data":{"tags":["inner"]}}`)
	for _, tc := range []struct {
		want []string
		ok   bool
	}{
		{nil, true},
		{[]string{`App\Models\Order:1001`}, true},
		{[]string{"urgent", "7"}, true},
		{[]string{"Urgent"}, false},                 // case-sensitive, as Horizon
		{[]string{"App\\Models\\Order:100"}, false}, // exact, not a part
		{[]string{"urgent", "missing"}, false},      // every one of them
		{[]string{"inner"}, false},                  // only the top-level key
	} {
		if got := HasTags(raw, tc.want); got != tc.ok {
			t.Errorf("HasTags(%q) = %v, want %v", tc.want, got, tc.ok)
		}
	}
	// PHP reads the last of duplicate keys.
	if got := Tags([]byte(`{"tags":["a"],"tags":["b"]}`)); !cmp.Equal(got, []string{"b"}) {
		t.Errorf("Tags of duplicate keys = %q, want [b]", got)
	}
	if Tags([]byte(`not json`)) != nil || HasTags([]byte(`{}`), []string{"a"}) {
		t.Error("a payload without tags has none")
	}
}

// TestTagNeedles: every needle occurs in the payload both as Horizon's
// json_encode writes it and as the Redis pop script's cjson re-encodes it.
func TestTagNeedles(t *testing.T) {
	for _, tc := range []struct {
		tag, php, cjson string
		want            []string
	}{
		{`App\Models\Order:1001`, `"tags":["App\\Models\\Order:1001"]`, `"tags":["App\\Models\\Order:1001"]`,
			[]string{`"App\\Models\\Order:1001"`}},
		{"a/b", `"tags":["a\/b"]`, `"tags":["a\/b"]`, []string{`"a\/b"`}},
		{"café:1", `"tags":["caf\u00e9:1"]`, `"tags":["café:1"]`, []string{`"caf`, `:1"`}},
		{"1001", `"tags":[1001]`, `"tags":[1001]`, []string{"1001"}},
		{"é", `"tags":["\u00e9"]`, `"tags":["é"]`, nil},
	} {
		got := TagNeedles(tc.tag)
		if !cmp.Equal(got, tc.want) {
			t.Errorf("TagNeedles(%q) = %q, want %q", tc.tag, got, tc.want)
		}
		for _, form := range []string{tc.php, tc.cjson} {
			for _, n := range got {
				if !strings.Contains(form, n) {
					t.Errorf("needle %q of %q not in %s", n, tc.tag, form)
				}
			}
			if !HasTags([]byte("{"+form+"}"), []string{tc.tag}) {
				t.Errorf("HasTags(%s, %q) = false", form, tc.tag)
			}
		}
	}
}
