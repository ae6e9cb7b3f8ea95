package phpconf_test

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/internal/appprofile/phpconf"
)

// fixtureDir holds config inputs and the caches real `php artisan
// config:cache` made from them (testdata/configcache/regen.sh).
const fixtureDir = "../../../testdata/configcache"

// staticUnknowns lists, per fixture, the config paths whose value PHP
// computed from an expression the static evaluator does not run; only these
// may be unknown in EvalConfig's result while the cache has a value. A path
// ending in "[?]" marks an array with an entry whose key is unknown (a
// class constant), so cache keys missing from the evaluation are allowed
// there.
func staticUnknowns() map[string][]string {
	return map[string][]string{
		"skeleton8": {
			"database.connections.mysql.options", // extension_loaded('pdo_mysql') ? array_filter([...]) : []
		},
		"tricky": {
			"database.connections.mysql.options",
			"queue.tricky.interp",  // "hello $retry"
			"queue.tricky.var",     // $retry
			"queue.tricky.call",    // array_filter([1, 0, 2])
			"queue.tricky.heredoc", // <<<EOT
			"queue.tricky.nowdoc",  // <<<'EOT'
			"queue.tricky[?]",      // PDO::ATTR_TIMEOUT => 5
			"queue.tricky.enum",    // an enum case: unknown in the cache too
			"queue.tricky.object",  // (object) [...]: unknown in the cache too
			"queue.tricky.point",   // an object: unknown in the cache too
		},
	}
}

func fixtures(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(fixtureDir, e.Name(), "bootstrap/cache/config.php")); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	if len(names) < 5 {
		t.Fatalf("found only %d fixtures in %s", len(names), fixtureDir)
	}
	return names
}

// evalFixture evaluates every config/*.php of a fixture the way Laravel
// loads them: one top-level key per file name.
func evalFixture(t *testing.T, dir string) *phpconf.Value {
	t.Helper()
	rootBytes, err := os.ReadFile(filepath.Join(dir, "ROOT"))
	if err != nil {
		t.Fatal(err)
	}
	root := strings.TrimSpace(string(rootBytes))
	envFile, err := os.Open(filepath.Join(dir, ".env"))
	if err != nil {
		t.Fatal(err)
	}
	defer envFile.Close()
	env, err := appprofile.ParseDotenvEnv(envFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := phpconf.EvalContext{Root: root, Env: func(name string) (string, bool) {
		v, ok := env[name]
		return v, ok
	}}
	files, err := filepath.Glob(filepath.Join(dir, "config", "*.php")) // the fixtures' config/ is flat
	if err != nil || len(files) == 0 {
		t.Fatalf("no config files in %s: %v", dir, err)
	}
	all := &phpconf.Value{Kind: phpconf.KindArray}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		v, err := phpconf.EvalConfig("config/"+name, src, ctx)
		if err != nil {
			t.Fatal(err)
		}
		all.Entries = append(all.Entries, phpconf.Entry{Key: strings.TrimSuffix(name, ".php"), Value: v})
	}
	return all
}

func TestFixturesEvalMatchesArtisanCache(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(fixtureDir, name)
			cacheFile := filepath.Join(dir, "bootstrap/cache/config.php")
			src, err := os.ReadFile(cacheFile)
			if err != nil {
				t.Fatal(err)
			}
			cache, err := phpconf.EvalConfig("bootstrap/cache/config.php", src, phpconf.EvalContext{})
			if err != nil {
				t.Fatal(err)
			}
			evaluated := evalFixture(t, dir)
			allowed := map[string]bool{}
			for _, p := range staticUnknowns()[name] {
				allowed[p] = false
			}
			for _, e := range evaluated.Entries {
				c := cache.Get(e.Key)
				if c == nil {
					t.Errorf("%s: in config/ but not in the cache", e.Key)
					continue
				}
				compareValues(t, e.Key, e.Value, c, allowed)
			}
			t.Logf("app.timezone=%s queue.failed.table=%s database.default=%s", show(evaluated.Get("app.timezone")), show(evaluated.Get("queue.failed.table")), show(evaluated.Get("database.default")))
			if !allowed["#compared"] {
				t.Fatal("nothing compared")
			}
			delete(allowed, "#compared")
			for p, used := range allowed {
				if !used {
					t.Errorf("%s is listed as statically unknown but evaluated fine", p)
				}
			}
			for _, key := range []string{"app.timezone", "app.name", "queue.default", "queue.failed.table", "queue.failed.driver", "database.default"} {
				if cache.Get(key) == nil {
					t.Errorf("cache has no %s", key)
				}
			}
		})
	}
}

// compareValues checks that what EvalConfig computed equals what PHP put
// in the cache.
func compareValues(t *testing.T, path string, ev, cv *phpconf.Value, allowed map[string]bool) {
	t.Helper()
	if ev.Pos.File == "" || ev.Pos.Line == 0 {
		t.Errorf("%s: evaluated value has no position", path)
	}
	if cv.Pos.File != "bootstrap/cache/config.php" || cv.Pos.Line == 0 {
		t.Errorf("%s: cache value has position %v", path, cv.Pos)
	}
	if ev.Kind == phpconf.KindUnknown {
		if _, ok := allowed[path]; ok {
			allowed[path] = true
			return
		}
		if cv.Kind == phpconf.KindUnknown {
			t.Errorf("%s: unknown in both (%q, %q) but not listed", path, ev.Expr, cv.Expr)
			return
		}
		t.Errorf("%s: EvalConfig gave unknown %q at %v; artisan cached %s", path, ev.Expr, ev.Pos, show(cv))
		return
	}
	if ev.Kind != cv.Kind {
		t.Errorf("%s: EvalConfig gave %s, artisan cached %s", path, show(ev), show(cv))
		return
	}
	allowed["#compared"] = true
	switch ev.Kind {
	case phpconf.KindArray:
		unknownKeys := false
		for _, e := range ev.Entries {
			if e.KeyUnknown {
				unknownKeys = true
			}
		}
		if unknownKeys {
			if _, ok := allowed[path+"[?]"]; !ok {
				t.Errorf("%s: array with an unknown key not listed", path)
			}
			allowed[path+"[?]"] = true
		}
		var evKeys, cvKeys []string
		for _, e := range ev.Entries {
			if e.KeyUnknown {
				continue
			}
			evKeys = append(evKeys, e.Key)
			c := entry(cv, e.Key)
			if c == nil {
				t.Errorf("%s.%s: evaluated but not cached", path, e.Key)
				continue
			}
			compareValues(t, path+"."+e.Key, e.Value, c, allowed)
		}
		for _, e := range cv.Entries {
			if entry(ev, e.Key) == nil {
				if !unknownKeys {
					t.Errorf("%s.%s: cached but not evaluated", path, e.Key)
				}
				continue
			}
			cvKeys = append(cvKeys, e.Key)
		}
		if strings.Join(evKeys, "\x00") != strings.Join(cvKeys, "\x00") {
			t.Errorf("%s: key order %q, cached %q", path, evKeys, cvKeys)
		}
	case phpconf.KindFloat:
		if !(ev.Float == cv.Float && math.Signbit(ev.Float) == math.Signbit(cv.Float)) && !(math.IsNaN(ev.Float) && math.IsNaN(cv.Float)) {
			t.Errorf("%s: EvalConfig gave %v, artisan cached %v", path, ev.Float, cv.Float)
		}
	default:
		if ev.Bool != cv.Bool || ev.Int != cv.Int || ev.Str != cv.Str {
			t.Errorf("%s: EvalConfig gave %s, artisan cached %s", path, show(ev), show(cv))
		}
	}
}

func entry(v *phpconf.Value, key string) *phpconf.Value {
	for _, e := range v.Entries {
		if !e.KeyUnknown && e.Key == key {
			return e.Value
		}
	}
	return nil
}

func show(v *phpconf.Value) string {
	if v.Kind == phpconf.KindUnknown {
		return "unknown " + v.Expr
	}
	if s, ok := v.String(); ok {
		return string(bytes.ToValidUTF8([]byte(s), []byte("?")))
	}
	return fmt.Sprintf("kind %d", v.Kind)
}
