package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

// held is the seed's row that failed_jobs refuses to delete (holdSeed).
const held = "22222222-2222-4222-8222-222222222222"

// holdSeed is seed with a legal hold on the row of uuid held: a trigger
// refuses its delete.
func holdSeed(t *testing.T) string {
	t.Helper()
	dsn, s := seed(t)
	q := "CREATE TRIGGER legal_hold BEFORE DELETE ON failed_jobs WHEN OLD.uuid = '" + held + "' BEGIN SELECT RAISE(ABORT, 'under legal hold'); END"
	if _, err := s.DB().Exec(q); err != nil {
		t.Fatal(err)
	}
	return dsn
}

// TestRefusedDeleteIsNamed: retry, forget and flush skip a row whose
// delete failed_jobs refuses, name it with the database's reason, do the
// rest and exit 7; forget --archive does not archive it, and --json lists it.
func TestRefusedDeleteIsNamed(t *testing.T) {
	// named: the row is named by its uuid (prune and flush: its row id).
	named := func(t *testing.T, h *harness, code ExitCode, name string) {
		t.Helper()
		if code != ExitPartial || !strings.Contains(h.errOut.String(), "failed_jobs refused to delete it (") ||
			!strings.Contains(h.errOut.String(), "under legal hold") ||
			!strings.Contains(h.errOut.String(), name) {
			t.Errorf("exit %d, want %d, and the held row named: %s%s", code, ExitPartial, h.out.String(), h.errOut.String())
		}
	}
	jsonSkipped := func(t *testing.T, h *harness) {
		t.Helper()
		var doc struct{ Skipped []triage.Skip }
		if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil {
			t.Fatalf("%v: %s", err, h.out.String())
		}
		if len(doc.Skipped) != 1 || doc.Skipped[0].Code != triage.SkipDeleteRefused || !strings.Contains(doc.Skipped[0].Reason, "under legal hold") {
			t.Errorf("skipped %+v, want the held row", doc.Skipped)
		}
	}
	t.Run("retry", func(t *testing.T) {
		h := newHarness(t, false)
		code := h.run("retry", "11111111-1111-4111-8111-111111111111", held, "--dsn", holdSeed(t))
		named(t, h, code, held)
		if !strings.Contains(h.out.String(), "Retried 1 job") {
			t.Errorf("summary: %s", h.out.String())
		}
	})
	t.Run("forget archive", func(t *testing.T) {
		h := newHarness(t, false)
		path := filepath.Join(t.TempDir(), "forgotten.ndjson")
		code := h.run("forget", "11111111-1111-4111-8111-111111111111", held, "--yes", "--archive", path, "--dsn", holdSeed(t))
		named(t, h, code, held)
		got, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(got), "11111111-1111-4111-8111-111111111111") || strings.Contains(string(got), held) {
			t.Errorf("archive (%v) holds the held row or not the forgotten one:\n%s", err, got)
		}
		if !strings.Contains(h.out.String()+h.errOut.String(), "Deleted 1 failed job; skipped 1") {
			t.Errorf("summary: %s%s", h.out.String(), h.errOut.String())
		}
	})
	t.Run("forget json", func(t *testing.T) {
		h := newHarness(t, false)
		if code := h.run("forget", held, "--yes", "--json", "--dsn", holdSeed(t)); code != ExitPartial {
			t.Errorf("exit %d, want %d", code, ExitPartial)
		}
		jsonSkipped(t, h)
	})
	t.Run("flush", func(t *testing.T) {
		h := newHarness(t, false)
		code := h.run("flush", "--yes", "--dsn", holdSeed(t))
		named(t, h, code, "row 2: ")
		if !strings.Contains(h.out.String(), "Deleted 3 failed jobs; kept 1") {
			t.Errorf("summary: %s", h.out.String())
		}
	})
	t.Run("flush json", func(t *testing.T) {
		h := newHarness(t, false)
		if code := h.run("flush", "--yes", "--json", "--dsn", holdSeed(t)); code != ExitPartial {
			t.Errorf("exit %d, want %d", code, ExitPartial)
		}
		jsonSkipped(t, h)
	})
}
