package payload

import (
	"bytes"
	"testing"
)

// classSeeds put displayName where the in-place read of JobClass must agree
// with the joined windows: absent, empty, repeated, cut by the window, with
// the window separator or escapes inside.
var classSeeds = []string{
	`{"displayName":"App\\Jobs\\A","job":"x"}`,
	`{"displayName":"","job":"J@handle"}`,
	`{"displayName":"A","displayName":"B"}`,
	"{\"displayName\":\"A\x1fB\",\"job\":\"J\"}",
	"{\"displayName\":\"A\",\x1f\"job\":\"J\"}",
	`{"displayName":"\u00e9\"x","data":{"command":"O:3:\"Foo\":0:{}"}}`,
	`{"displayName":` + `"` + string(make([]byte, 600)) + `"}`,
	`{"displayName":5,"data":{"commandName":"C"}}`,
	`{"job":"J@handle"}`, ``, "\x1f",
}

// TestJobClassInPlace: reading displayName's window in place gives what
// the joined windows give.
func TestJobClassInPlace(t *testing.T) {
	for _, raw := range classSeeds {
		if got, want := JobClass([]byte(raw)), JobClass(ClassWindows([]byte(raw))); got != want {
			t.Errorf("%q: JobClass %q, from the windows %q", raw, got, want)
		}
	}
	if JobClass([]byte(classSeeds[0])) != `App\Jobs\A` {
		t.Fatal("the first seed's class is not read: the comparison proves nothing")
	}
}

func FuzzJobClassInPlace(f *testing.F) {
	for _, s := range classSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) > 0 && raw[0] == ClassWindowSep {
			return // windows already
		}
		if got, want := JobClass(raw), JobClass(ClassWindows(raw)); got != want {
			t.Fatalf("%q: JobClass %q, from the windows %q", raw, got, want)
		}
	})
}

// TestLastIndex: the forward search finds what bytes.LastIndex finds.
func TestLastIndex(t *testing.T) {
	for _, c := range []struct{ s, sep string }{
		{"", "a"}, {"a", ""}, {"", ""}, {"abc", "abc"}, {"aaaa", "aa"}, {"xaxa", "a"},
		{`{"displayName":"A","displayName":"B"}`, `"displayName":`}, {"abc", "d"},
	} {
		if got, want := lastIndex([]byte(c.s), []byte(c.sep)), bytes.LastIndex([]byte(c.s), []byte(c.sep)); got != want {
			t.Errorf("lastIndex(%q, %q) = %d, want %d", c.s, c.sep, got, want)
		}
	}
}
