package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

func TestNewCmdShow(t *testing.T) {
	p := parseWith(t, NewCmdShow, "11111111-1111-4111-8111-111111111111")
	if p.code != ExitOK || p.opts.ID != "11111111-1111-4111-8111-111111111111" || p.opts.JSON || p.opts.Frames != 12 {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, p.opts)
	}
	p = parseWith(t, NewCmdShow, "1042", "--json", "--frames", "0")
	if p.code != ExitOK || p.opts.ID != "1042" || !p.opts.JSON || p.opts.Frames != 0 {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, p.opts)
	}
	usageCases(t, NewCmdShow, map[string][]string{
		"exactly one job id, got 0": {},
		"exactly one job id, got 2": {"1", "2"},
		"is not a valid row id":     {"0"},
		"invalid argument":          {"1", "--frames", "x"},
	})
}

// TestShowRun: show on the in-memory store prints the job's detail (text
// and JSON) and answers an unknown id with exit 4 and one line.
func TestShowRun(t *testing.T) {
	h, _ := fakeHarness(t, false, 3)
	if code := h.run("show", fakeUUID(2)); code != ExitOK {
		t.Fatalf("exit %d %s", code, h.errOut.String())
	}
	for _, want := range []string{fakeUUID(2), "emails", `App\Jobs\SendMail`, "SMTP down"} {
		if !strings.Contains(h.out.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, h.out.String())
		}
	}
	if code := h.run("show", "2", "--json"); code != ExitOK || !strings.Contains(h.out.String(), `"uuid": "`+fakeUUID(2)+`"`) {
		t.Errorf("--json by integer id: exit %d %s %s", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("show", "42"); code != ExitNotFound || h.out.Len() != 0 || strings.Count(h.errOut.String(), "\n") != 1 {
		t.Errorf("unknown id: exit %d out %q err %q", code, h.out.String(), h.errOut.String())
	}
}

// detailFixture is testdata/show-detail.json: failed rows as stored, the
// clock, and a name for each. show's text goldens are made from it, and the
// TUI's TestDetailAgreesWithShow renders the same rows and compares.
type detailFixture struct {
	Now   time.Time
	Cases []struct {
		Name string
		Row  triagetest.Row
	}
}

// TestShowText: what show prints for each row of the fixture, against
// testdata/TestShowText/<name>.golden (-update rewrites them; the TUI's
// tabs must then say the same).
func TestShowText(t *testing.T) {
	var fx detailFixture
	if b, err := os.ReadFile(filepath.Join("testdata", "show-detail.json")); err != nil || json.Unmarshal(b, &fx) != nil {
		t.Fatalf("fixture: %v", err)
	}
	h := newHarness(t, false)
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	h.f.Now = func() time.Time { return fx.Now }
	h.f.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: st, Now: h.f.Now, Location: time.UTC}, nil
	}
	for _, c := range fx.Cases {
		st.Add(c.Row)
		t.Run(c.Name, func(t *testing.T) {
			if code := h.run("show", c.Row.UUID); code != ExitOK {
				t.Fatalf("exit %d: %s", code, h.errOut.String())
			}
			golden.RequireEqual(t, h.out.Bytes())
		})
	}
}

// TestShowJSONLaravel13Keys: the payload keys Laravel 11–13 added have keys
// of their own in show --json, and leave extra.
func TestShowJSONLaravel13Keys(t *testing.T) {
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
		st.Add(c.Row)
	}
	var doc struct {
		Envelope map[string]json.RawMessage
	}
	if code := h.run("show", "--json", "13131313-0000-4000-8000-000000000001"); code != ExitOK || json.Unmarshal(h.out.Bytes(), &doc) != nil {
		t.Fatalf("exit %d: %s %s", code, h.out.String(), h.errOut.String())
	}
	want := map[string]string{
		"delay": "600", "delete_when_missing_models": "false", "created_at": `"2026-11-30T12:00:00Z"`,
		"batch_id": `"9f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f"`, "extra": "[]",
		"log_context": `{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:41:\"laravel_unique_job:App\\Jobs\\TimesOut:1000\";"}}`,
	}
	for k, v := range want {
		var b bytes.Buffer
		if err := json.Compact(&b, doc.Envelope[k]); err != nil || b.String() != v {
			got := b.String()
			t.Errorf("envelope.%s = %s, want %s", k, got, v)
		}
	}
}
