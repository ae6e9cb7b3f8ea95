package phpconf

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestEvalConfigDir(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"queue.php":             "<?php return ['default' => env('QUEUE_CONNECTION', 'sync'), 'dir' => __DIR__];",
		"services.php":          "<?php return ['mail' => 'replaced', 'other' => 1];",
		"services/mail.php":     "<?php return ['host' => 'smtp'];",
		"services/deep/x10.php": "<?php return [10];",
		"services/deep/x9.php":  "<?php return [9];",
		"broken.php":            "<?php echo 'no return';",
		"notes.txt":             "ignored",
		".hidden.php":           "<?php return [1];",
		".git/x.php":            "<?php return [1];",
	}
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := EvalConfigDir(dir, EvalContext{Root: "/srv/app", Env: envMap(map[string]string{"QUEUE_CONNECTION": "redis"})})
	var ee *EvalError
	if !errors.As(err, &ee) || ee.File != "config/broken.php" {
		t.Errorf("error %v, want config/broken.php's", err)
	}
	want := "[broken=unknown:require config/broken.php queue=[default=string:redis dir=string:/srv/app/config] " +
		"services=[mail=[host=string:smtp] other=int:1 deep=[x9=[0=int:9] x10=[0=int:10]]]]"
	if got := describe(v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if p := v.Get("services.mail.host").Pos.String(); p != "config/services/mail.php:1" {
		t.Errorf("position %s", p)
	}
	if _, err := EvalConfigDir(filepath.Join(dir, "missing"), EvalContext{}); err == nil {
		t.Error("no error for a missing directory")
	}
}

func TestNaturalLess(t *testing.T) {
	sorted := []string{"", "a", "a.b", "a1", "a2", "a10", "a010b", "a10c", "app", "b"}
	for i := range sorted {
		for j := range sorted {
			if got := naturalLess(sorted[i], sorted[j]); got != (i < j) {
				t.Errorf("naturalLess(%q, %q) = %v", sorted[i], sorted[j], got)
			}
		}
	}
}
