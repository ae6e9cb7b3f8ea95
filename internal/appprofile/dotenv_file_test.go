package appprofile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A .env that is there but is no readable file is an error naming what it
// is, never "no .env" (which would silently fall back to Laravel's
// defaults); a FIFO is refused at once instead of waiting for a writer.
func TestDotenvThatIsNoFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, make func(string) error) string {
		p := filepath.Join(dir, name)
		if err := make(p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := map[string]struct {
		path string
		want string
	}{
		"directory": {mk("dir.env", func(p string) error { return os.Mkdir(p, 0o755) }), "is a directory"},
		"fifo":      {mk("fifo.env", func(p string) error { return syscall.Mkfifo(p, 0o644) }), "is a FIFO"},
		"loop": {mk("loop.env", func(p string) error {
			return os.Symlink(p, p)
		}), "symlink loop"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if ok, err := DotenvPresent(tc.path); ok || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DotenvPresent = %v, %v; want an error saying %q", ok, err, tc.want)
			}
			done := make(chan error, 1)
			go func() { _, err := LoadDotenv(tc.path); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("LoadDotenv = %v; want an error saying %q", err, tc.want)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("LoadDotenv blocked")
			}
		})
	}
	// A dangling symlink is absent, as PHP's is_file says.
	dangling := mk("dangling.env", func(p string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) })
	if ok, err := DotenvPresent(dangling); ok || err != nil {
		t.Errorf("dangling symlink: %v, %v; want absent", ok, err)
	}
	// Through the profile: a .env directory in the app is an error.
	app := t.TempDir()
	if err := os.Mkdir(filepath.Join(app, ".env"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := chooseEnvFile(Options{}, map[string]string{}, app, app); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("chooseEnvFile with a .env directory: %v", err)
	}
	if _, err := Resolve(Options{Dir: app, Cwd: app}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Resolve with a .env directory: %v", err)
	}
	// With an explicit DSN it costs only the extras, as a .env that does
	// not parse: a warning, not a refusal.
	if err := os.WriteFile(filepath.Join(app, "x.sqlite"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Resolve(Options{Dir: app, Cwd: app, DSN: "sqlite:" + filepath.Join(app, "x.sqlite")})
	if err != nil || !strings.Contains(strings.Join(cfg.Warnings, "\n"), "is a directory") {
		t.Errorf("Resolve --dsn with a .env directory: %v, warnings %q", err, cfg.Warnings)
	}
}
