package contexts

import (
	"strings"
	"testing"
)

// FuzzParse: any file either parses into valid contexts or fails with one
// line naming the file; nothing panics, and a context that parses can be
// shown redacted.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sample))
	f.Add([]byte("[contexts.a]\ndsn = \"sqlite:/x.db\"\ncolour = 1\n"))
	f.Add([]byte("current-context = \"a\"\n[contexts]\na = { dsn = \"postgres://u:p@h/d\", redis = \"redis://p@h/1\" }\n"))
	f.Add([]byte("[contexts.\"a b\"]\n[[contexts.x]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("c.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "c.toml") || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error %q: not one line naming the file", err)
			}
			return
		}
		for _, c := range file.Contexts {
			if !nameRE.MatchString(c.Name) || (c.App == "" && c.DSN == "") {
				t.Fatalf("invalid context accepted: %+v", c)
			}
			_ = c.Redacted()
			_ = c.Marker()
		}
		if file.CurrentContext != "" {
			if _, ok := file.Context(file.CurrentContext); !ok {
				t.Fatalf("current-context %q names no context", file.CurrentContext)
			}
		}
	})
}
