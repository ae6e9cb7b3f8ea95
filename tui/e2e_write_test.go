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
