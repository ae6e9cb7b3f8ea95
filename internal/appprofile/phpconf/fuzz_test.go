package phpconf

import (
	"os"
	"path/filepath"
	"testing"
)

// seedFiles returns the fixture files matching the glob patterns, relative
// to testdata/configcache.
func seedFiles(f *testing.F, patterns ...string) [][]byte {
	var out [][]byte
	for _, p := range patterns {
		files, err := filepath.Glob(filepath.Join("../../../testdata/configcache", p))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		f.Fatalf("no seeds for %v", patterns)
	}
	return out
}

// maxGetChecks is how many entries of each array checkValue looks up.
const maxGetChecks = 8

// checkValue walks a result and checks the invariants every Value keeps.
func checkValue(t *testing.T, v *Value, depth int) {
	if v == nil {
		t.Fatal("nil value")
	}
	if depth > maxTreeDepth+1 {
		t.Fatalf("value nested %d deep", depth)
	}
	if v.Pos.Line < 1 {
		t.Fatalf("value without a line: %+v", v)
	}
	if len(v.Expr) > maxExprLen+len("…") {
		t.Fatalf("Expr of %d bytes", len(v.Expr))
	}
	v.String()
	v.IntValue()
	v.Truthy()
	for i, e := range v.Entries {
		checkValue(t, e.Value, depth+1)
		if i < maxGetChecks { // Get is linear in the entries: checking all of them is quadratic
			if !e.KeyUnknown && v.Get(e.Key) == nil {
				t.Fatalf("Get(%q) found nothing", e.Key)
			}
		}
	}
}

func FuzzParseCache(f *testing.F) {
	for _, b := range seedFiles(f, "*/bootstrap/cache/config.php") {
		f.Add(b)
	}
	if b, err := os.ReadFile("testdata/var_export.php"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("<?php return array ( 'a' => -9223372036854775807-1, 'b' => '' . \"\\0\" . '', 'c' => \\X::__set_state(array( 'k' => 1, )), );"))
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := parseCache("c.php", src)
		if err != nil {
			if v != nil {
				t.Fatal("value and error")
			}
			return
		}
		if v.Kind != KindArray {
			t.Fatalf("top level is kind %d", v.Kind)
		}
		checkValue(t, v, 0)
		v.Get("app.timezone")
		v.Get("a.b.c.d.e.f")
	})
}

func FuzzEvalConfig(f *testing.F) {
	for _, b := range seedFiles(f, "*/config/*.php") {
		f.Add(b)
	}
	f.Add([]byte("<?php return ['a' => env('A', Str::slug(env('B', 'x y'), '_')), 'b' => fn() => [1], PDO::X => \"$y\", 'c' => <<<E\nz\nE];"))
	env := envMap(map[string]string{"APP_NAME": "Fuzz @ App", "DB_CONNECTION": "(null)", "APP_DEBUG": "true", "A": "'q'"})
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := EvalConfig("config/x.php", src, EvalContext{Root: "/app", Env: env})
		if err != nil {
			if v != nil {
				t.Fatal("value and error")
			}
			return
		}
		if v.Kind != KindArray {
			t.Fatalf("top level is kind %d", v.Kind)
		}
		checkValue(t, v, 0)
	})
}
