package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// TestGroupUsesTheSignatureIndex: failed --group keeps an index in the
// cache directory and answers the same from it after new failures and a
// forget; --no-cache reads the table and leaves the cache alone.
func TestGroupUsesTheSignatureIndex(t *testing.T) {
	dsn, s := seed(t)
	h := newHarness(t, false)
	cache := filepath.Join(h.dir, "cache")
	if code := h.run("failed", "--dsn", dsn, "--group", "--json", "--no-cache"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	scan := h.out.String()
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("--no-cache wrote the cache directory (%v)", err)
	}
	if code := h.run("failed", "--dsn", dsn, "--group", "--json"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	if h.out.String() != scan {
		t.Errorf("the index grouped differently:\n%s\nscan:\n%s", h.out.String(), scan)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "*.sigidx"))
	if len(files) != 1 {
		t.Fatalf("index files %q", files)
	}
	// Another process forgets a job and a new one fails.
	fx := sqltest.FailedFixture{UUID: ptr("55555555-5555-4555-8555-555555555555"), Connection: "database", Queue: "default",
		Payload: `{"uuid":"55555555-5555-4555-8555-555555555555","displayName":"App\\Jobs\\SendMail"}`, Exception: "RuntimeException: x", FailedAt: "2026-11-30 11:50:00"}
	sqltest.InsertFailed(t, s, fx)
	if _, err := s.DB().Exec("DELETE FROM failed_jobs WHERE uuid = '22222222-2222-4222-8222-222222222222'"); err != nil {
		t.Fatal(err)
	}
	for _, noCache := range []bool{true, false} {
		args := []string{"failed", "--dsn", dsn, "--group", "--json"}
		if noCache {
			args = append(args, "--no-cache")
		}
		if code := h.run(args...); code != ExitOK {
			t.Fatalf("exit %d: %s", code, h.errOut.String())
		}
		if noCache {
			scan = h.out.String()
		} else if h.out.String() != scan {
			t.Errorf("after a forget and a new failure the index grouped differently:\n%s\nscan:\n%s", h.out.String(), scan)
		}
	}
	if h.errOut.Len() != 0 {
		t.Errorf("stderr: %q", h.errOut.String())
	}
}

func TestNoCacheFlag(t *testing.T) {
	h := newHarness(t, false)
	var got bool
	cmd := NewCmdRoot(h.f)
	cmd.SetArgs([]string{"failed", "--no-cache", "--help"})
	_ = cmd.Execute()
	got = h.f.NoCache
	if !got {
		t.Error("--no-cache did not reach the factory")
	}
}
