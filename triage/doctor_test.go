package triage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// monitored is a store with the jobs-table reads a monitor needs.
type monitored struct {
	triage.Store
	triage.MonitorStore
}

// described is a store that reports facts of its own.
type described struct {
	triage.Store
	err error
}

func (d described) Inspect(context.Context) (triage.StoreFacts, error) {
	return triage.StoreFacts{File: "failed-jobs.json", FileJobs: 3}, d.err
}

// TestStoreCapabilities: the service hands out what its store can do
// beyond Store, and nothing for a store that cannot.
func TestStoreCapabilities(t *testing.T) {
	plain := &triage.Service{Store: triagetest.New(triage.IDModeUUID, nil)}
	if src, ok := plain.MonitorSource(); ok || src != nil {
		t.Errorf("a store without jobs-table reads monitors: %v", src)
	}
	if f, err := plain.Inspect(context.Background()); err != nil || f.Database != nil || f.File != "" {
		t.Errorf("a store that reports nothing: %+v, %v", f, err)
	}
	st := monitored{Store: plain.Store}
	if src, ok := (&triage.Service{Store: st}).MonitorSource(); !ok || src != triage.MonitorSource(st) {
		t.Errorf("MonitorSource = %v, %v; want the store", src, ok)
	}
	f, err := (&triage.Service{Store: described{Store: plain.Store}}).Inspect(context.Background())
	if err != nil || f.File == "" || f.FileJobs != 3 {
		t.Errorf("Inspect = %+v, %v; want the store's facts", f, err)
	}
	gone := errors.New("gone")
	if _, err := (&triage.Service{Store: described{err: gone}}).Inspect(context.Background()); !errors.Is(err, gone) {
		t.Errorf("Inspect error %v, want the store's", err)
	}
}
