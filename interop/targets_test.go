package interop

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParseLaravelTargets: JOBTRIAGE_INTEROP_LARAVEL names the Laravels
// to run, each with its php and the app in its skeleton; anything the
// harness cannot run is an error, never a silently smaller run.
func TestParseLaravelTargets(t *testing.T) {
	got, err := parseLaravelTargets("8.83=php, 10.48=/c/trixie-php\t13.31=/c/sid-php")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ version, php, app string }{
		{"8.83", "php", "laravel-app"},
		{"10.48", "/c/trixie-php", "laravel-app"},
		{"13.31", "/c/sid-php", "laravel13-app"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.version != w.version || g.php != w.php || filepath.Base(g.app) != w.app || !filepath.IsAbs(g.app) {
			t.Errorf("target %d = %+v, want %s with %s in an absolute .../%s", i, g, w.version, w.php, w.app)
		}
	}

	def, err := parseLaravelTargets("")
	if err != nil || len(def) != 1 || def[0].version != "8.83" || def[0].php != "php" {
		t.Errorf("unset: %+v %v, want only 8.83 on the host php", def, err)
	}

	for raw, wantErr := range map[string]string{
		"12.0=php":            "no app for Laravel 12.0",
		"10.48":               `"10.48" is not VERSION=PHP`,
		"13.31=":              `"13.31=" is not VERSION=PHP`,
		"8.83=php 8.83=php84": "Laravel 8.83 listed twice",
	} {
		if _, err := parseLaravelTargets(raw); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: error %v, want one containing %q", raw, err, wantErr)
		}
	}
}
