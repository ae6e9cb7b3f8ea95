package tui

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// triage.Service is what cmd hands to Run, for both roles (as Actions through ServiceActions).
var (
	_ Backend = (*triage.Service)(nil)
	_ Actions = ServiceActions{}
)

func TestEndToEndRetryLeavesTheList(t *testing.T) {
	svc := seededService(t)
	tm := startProgram(t, svc, ServiceActions{svc})

	waitFor(t, tm, "32 failed")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown}) // ImportFeed, 2 jobs
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "5c0e0000-1111-4222-8333-000000000032")
	tm.Type("r")
	waitFor(t, tm, "Retry 1 failed job 5c0e0000-1111-4222-8333-000000000032?")
	tm.Type("y")
	waitFor(t, tm, "Retried job 5c0e0000-1111-4222-8333-000000000032 onto imports (1).", "31 failed")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	for _, j := range final.jobs.items {
		if j.ID == "5c0e0000-1111-4222-8333-000000000032" {
			t.Fatal("the retried job is still listed")
		}
	}
	if len(final.jobs.items) != 1 {
		t.Fatalf("jobs left = %d, want 1", len(final.jobs.items))
	}
}

// Marks and a bulk retry through the real service, keys as a terminal
// sends them (space alone, letters in bursts).
func TestEndToEndMarkAndRetry(t *testing.T) {
	svc := seededService(t)
	tm := startProgram(t, svc, ServiceActions{svc})

	waitFor(t, tm, "32 failed", "1 of 2 signatures")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("s")})
	// The cursor stays on SyncInvoice, now second; g goes to ImportFeed.
	waitFor(t, tm, "LAST SEEN▼", "Sorted by last seen.", "2 of 2 signatures")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("g")})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, "1 of 2 jobs")
	tm.Send(tea.KeyMsg{Type: tea.KeySpace})
	tm.Send(tea.KeyMsg{Type: tea.KeySpace})
	waitFor(t, tm, "2 of 2 jobs · 2 marked")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	waitFor(t, tm, "Retry 2 marked jobs?", "Dry run: 2 would be retried onto imports (2).")
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	waitFor(t, tm, "Retried 2 of 2 marked jobs onto imports (2).", "30 failed")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if len(final.jobs.items) != 0 || len(final.sigs.items) != 1 {
		t.Fatalf("after the retry: %d jobs, %d signatures", len(final.jobs.items), len(final.sigs.items))
	}
}

// A forget with an archive (tui --archive) appends the row whole to the
// archive before deleting it, through the real service and archive writer.
func TestEndToEndForgetArchivesTheRow(t *testing.T) {
	svc := seededService(t)
	const id = "5c0e0000-1111-4222-8333-000000000032"
	before, err := svc.Store.GetFailed(t.Context(), triage.Ref{UUID: id})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "forgotten.ndjson")
	w, err := archive.Open(path, io.Discard, fixedNow)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tm := startProgramWith(t, svc, ServiceActions{svc}, Options{Archive: w, ArchivePath: path})

	waitFor(t, tm, "32 failed")
	tm.Send(tea.KeyMsg{Type: tea.KeyDown}) // ImportFeed, 2 jobs
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	waitFor(t, tm, id)
	tm.Type("f")
	waitFor(t, tm, "Forget 1 failed job "+id+"?", "archived to")
	tm.Type("y")
	waitFor(t, tm, "Forgot job "+id+"; archived to", "31 failed")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))

	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := archive.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil {
		t.Fatalf("the archive holds no record: %v", err)
	}
	if rec.UUID == nil || *rec.UUID != id || rec.Payload == nil || *rec.Payload != string(before.Payload) {
		t.Errorf("archived %+v, want the row of %s whole", rec, id)
	}
	if _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("a second record: %v", err)
	}
	if _, err := svc.Store.GetFailed(t.Context(), triage.Ref{UUID: id}); !errors.Is(err, triage.ErrNotFound) {
		t.Errorf("the forgotten row is still there: %v", err)
	}
}
