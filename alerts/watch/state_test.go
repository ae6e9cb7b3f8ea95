package watch

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/jobtriage/jobtriage/alerts"
)

// TestDefaultStatePath: under $XDG_STATE_HOME, else ~/.local/state, one
// file per app; none without either directory.
func TestDefaultStatePath(t *testing.T) {
	env := map[string]string{"HOME": "/home/ops"}
	getenv := func(k string) string { return env[k] }
	shop, blog := alerts.App{Name: "shop", Database: "postgres://db/shop"}, alerts.App{Name: "blog", Database: "postgres://db/shop"}
	p := DefaultStatePath(getenv, shop)
	if dir, file := filepath.Split(p); dir != "/home/ops/.local/state/jobtriage/" || !regexp.MustCompile(`^watch-[0-9a-f]{12}\.json$`).MatchString(file) {
		t.Errorf("under HOME: %q", p)
	}
	if DefaultStatePath(getenv, shop) != p || DefaultStatePath(getenv, blog) == p {
		t.Error("the path is not one per app")
	}
	env["XDG_STATE_HOME"] = "/var/lib/state"
	if got := DefaultStatePath(getenv, shop); got != filepath.Join("/var/lib/state/jobtriage", filepath.Base(p)) {
		t.Errorf("under XDG_STATE_HOME: %q", got)
	}
	if got := DefaultStatePath(func(string) string { return "" }, shop); got != "" {
		t.Errorf("no directory: %q", got)
	}
}
