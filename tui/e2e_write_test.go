package tui

import (
	"github.com/jobtriage/jobtriage/triage"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
)

// triage.Service is what cmd hands to Run, for both roles.
var (
	_ Backend = (*triage.Service)(nil)
	_ Actions = (*triage.Service)(nil)
)

func TestEndToEndRetryLeavesTheList(t *testing.T) {
	svc := seededService(t)
	tm := startProgram(t, svc, svc)

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
	tm := startProgram(t, svc, svc)

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
