package cmd

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// TestRetryDryRunNamesDeleteWhenMissingModels: a dry run says how many jobs
// a Laravel 13 worker would delete without a failure row if their model is
// gone (the fixture's queued closure has deleteWhenMissingModels true), and
// --json counts them.
func TestRetryDryRunNamesDeleteWhenMissingModels(t *testing.T) {
	var fx detailFixture
	if b, err := os.ReadFile(filepath.Join("testdata", "show-detail.json")); err != nil || json.Unmarshal(b, &fx) != nil {
		t.Fatalf("fixture: %v", err)
	}
	h := newHarness(t, false)
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	h.f.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: st, Now: func() time.Time { return fx.Now }, Location: time.UTC}, nil
	}
	for _, c := range fx.Cases {
		if strings.HasPrefix(c.Name, "laravel13-") {
			st.Add(c.Row)
		}
	}
	h.run("retry", "all", "--dry-run")
	want := "1 job has deleteWhenMissingModels: on Laravel 13 a worker deletes such a job whose model is gone, with no new failed_jobs row.\n"
	if !strings.Contains(h.out.String(), "Would retry 2 jobs") || !strings.Contains(h.out.String(), want) {
		t.Errorf("dry run printed\n%s%s\nwant a line %q", h.out.String(), h.errOut.String(), want)
	}
	var doc struct {
		N *int `json:"delete_when_missing_models"`
	}
	h.run("retry", "all", "--dry-run", "--json")
	if json.Unmarshal(h.out.Bytes(), &doc) != nil || doc.N == nil || *doc.N != 1 {
		t.Errorf("--json: %s", h.out.String())
	}
}
