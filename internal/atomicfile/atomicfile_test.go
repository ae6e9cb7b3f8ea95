package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesWithPermAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "new" {
		t.Fatalf("read %q, %v; want new", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	// A rename onto a directory fails: the temporary file must go too.
	if err := Write(dir, []byte("x"), 0o600); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), "*.tmp*"))
	entries, _ := os.ReadDir(dir)
	if len(left) != 0 || len(entries) != 1 {
		t.Errorf("left behind: %q, %d entries in %s", left, len(entries), dir)
	}
}
