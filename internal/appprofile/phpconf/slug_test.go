package phpconf

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Slug is Str::slug($s, $sep) with the default language "en".
func Slug(s, sep string) string {
	out, _ := slugLang(s, sep, "en")
	return out
}

func TestSlugBriefVectors(t *testing.T) {
	// Checked with php -r 'require "Illuminate/autoload.php"; echo Illuminate\Support\Str::slug(...);'
	for _, c := range []struct{ in, sep, want string }{
		{"My App", "_", "my_app"},
		{"Laravel", "-", "laravel"},
		{"Foo@Bar Baz", "_", "foo_at_bar_baz"},
		{"ÄÖÜ straße", "_", "aou_strasse"},
		{"ÄÖÜ straße", "-", "aou-strasse"},
	} {
		if got := Slug(c.in, c.sep); got != c.want {
			t.Errorf("Slug(%q, %q) = %q, want %q", c.in, c.sep, got, c.want)
		}
	}
}

// TestSlugMatchesLaravel replays slug_vectors.json, which regen.sh writes
// from Laravel 8's own Str::slug over awkward inputs and separators.
func TestSlugMatchesLaravel(t *testing.T) {
	raw, err := os.ReadFile("../../../testdata/configcache/slug_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct{ In, Sep, Out string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	dec := func(s string) string {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, v := range vectors {
		in, sep, want := dec(v.In), dec(v.Sep), dec(v.Out)
		if got := Slug(in, sep); got != want {
			t.Errorf("Slug(%q, %q) = %q, Laravel gives %q", in, sep, got, want)
		}
	}
	if len(vectors) < 100 {
		t.Fatalf("only %d vectors", len(vectors))
	}
}

// TestASCIITableIsGenerated checks, where PHP finds Illuminate/autoload.php
// (Debian's php-laravel-framework, which brings php-voku-portable-ascii),
// that ascii.tsv is what ascii_gen.php writes from the installed tables.
func TestASCIITableIsGenerated(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php is not installed")
	}
	if exec.Command("php", "-r", `exit(stream_resolve_include_path("Illuminate/autoload.php") ? 0 : 1);`).Run() != nil {
		t.Skip("php finds no Illuminate/autoload.php")
	}
	out := filepath.Join(t.TempDir(), "ascii.tsv")
	if msg, err := exec.Command("php", "ascii_gen.php", out).CombinedOutput(); err != nil {
		t.Fatalf("ascii_gen.php: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != asciiTable {
		t.Fatal("ascii.tsv differs from what ascii_gen.php writes: run go generate")
	}
}
