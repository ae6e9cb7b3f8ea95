package cmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/doctor"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// The report's parts as the command's JSON tests read them.
type (
	doctorConnection = doctor.Connection
	doctorCheck      = doctor.Check
)

// TestDoctorCheckStore: doctor reports a store it cannot open as a failed
// check (with the reason, on one line), and one it opens but does not
// know (neither SQL nor the file driver) as opened.
func TestDoctorCheckStore(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	h.f.Conn.DSN = dsn
	opts := doctorOpts(h, fakeOpeners(nil), false)
	opts.Service = func(context.Context) (*triage.Service, error) { return nil, errors.New("no route to host") }
	code := runDoctor(t, h, opts)
	if code != ExitError || !strings.Contains(h.out.String(), "FAIL  failed-jobs store: no route to host\n") {
		t.Errorf("a store that does not open: exit %d\n%s", code, h.out.String())
	}
	opts.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: triagetest.New(triage.IDModeUUID, nil), Now: h.f.Now, Location: time.UTC}, nil
	}
	code = runDoctor(t, h, opts)
	if code != ExitOK || !strings.Contains(h.out.String(), "ok    failed-jobs store: opened\n") {
		t.Errorf("another store: exit %d\n%s", code, h.out.String())
	}
}
