package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// queueDB makes a Laravel database on driver with pending jobs on the
// default queue (the oldest available for pendingAge), one reserved job
// and failures failures a few seconds ago, and returns its DSN and store.
func queueDB(t *testing.T, driver string, pending int, pendingAge time.Duration, failures int) (string, *sqlstore.Store) {
	t.Helper()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	now := testNow.Unix()
	insert := s.DB().Rebind("INSERT INTO jobs (queue, payload, attempts, reserved_at, available_at, created_at) VALUES (?, '{}', 0, ?, ?, ?)")
	for i := range pending {
		at := now - int64(pendingAge/time.Second) + int64(i)
		if _, err := s.DB().Exec(insert, "default", nil, at, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.DB().Exec(insert, "default", now-10, now-20, now-20); err != nil {
		t.Fatal(err)
	}
	var fx []sqltest.FailedFixture
	for i := range failures {
		fx = append(fx, monitorFailure(i+1, "default", `App\Jobs\A`, testNow.Add(-time.Duration(i+1)*time.Second)))
	}
	if len(fx) > 0 {
		sqltest.InsertFailed(t, s, fx...)
	}
	return sqltest.DSN(s.Endpoint()), s
}

// writeContexts writes a configuration file with one context per name.
func writeContexts(t *testing.T, contexts map[string]string, extra map[string]string) string {
	t.Helper()
	var b strings.Builder
	for name, dsn := range contexts {
		fmt.Fprintf(&b, "[contexts.%s]\ndsn = %q\n%s\n", name, dsn, extra[name])
	}
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewCmdMonitorContextFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		err  string
	}{
		{[]string{"--all-contexts"}, nil, ""},
		{[]string{"--contexts", "a,b", "--parallel", "2"}, nil, ""},
		{[]string{"--all-contexts", "--contexts", "a"}, nil, "alternatives"},
		{[]string{"--all-contexts", "--dsn", "sqlite:/x.db"}, nil, "--dsn would replace the database of every context"},
		{[]string{"--all-contexts", "--context", "a"}, nil, "--context would replace"},
		{[]string{"--all-contexts"}, map[string]string{"JOBTRIAGE_DSN": "sqlite:/x.db"}, "JOBTRIAGE_DSN would replace"},
		{[]string{"--all-contexts", "--format", "prometheus"}, nil, "--format prometheus covers one app"},
		{[]string{"--all-contexts", "--parallel", "0"}, nil, `"--parallel" flag: must be at least 1`},
		{[]string{"--listen", "127.0.0.1:9187"}, nil, "add --watch"},
		{[]string{"--watch", "--max", "3", "--listen", "9187"}, nil, "want HOST:PORT"},
		{[]string{"--watch", "--max", "3", "--listen", "127.0.0.1:0"}, nil, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h := newHarness(t, false)
			withEnv(h, tc.env)
			var got *MonitorOptions
			root := NewCmdRoot(h.f)
			for _, c := range root.Commands() {
				if c.Name() == "monitor" {
					root.RemoveCommand(c)
				}
			}
			root.AddCommand(NewCmdMonitor(h.f, func(_ context.Context, o *MonitorOptions) error { got = o; return nil }))
			root.SetArgs(append([]string{"monitor"}, tc.args...))
			root.SetOut(h.out)
			root.SetErr(h.errOut)
			err := root.Execute()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || exitCodeFor(err) != ExitUsage {
					t.Fatalf("error %v (exit %d), want %q (exit 2)", err, exitCodeFor(err), tc.err)
				}
				return
			}
			if err != nil || got == nil {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// TestMonitorAllContextsOverThreeDatabases: one run checks a PostgreSQL, a
// MariaDB and a SQLite app in parallel, reports each in its own section
// with the values in its database, and exits with the worst code.
func TestMonitorAllContextsOverThreeDatabases(t *testing.T) {
	pgDSN, _ := queueDB(t, "postgres", 2, 5*time.Minute, 1)
	myDSN, _ := queueDB(t, "mysql", 4, 20*time.Minute, 0)
	liteDSN, _ := queueDB(t, "sqlite", 1, time.Minute, 3)
	path := writeContexts(t, map[string]string{"pg": pgDSN, "maria": myDSN, "lite": liteDSN},
		map[string]string{"maria": "production = true\nlabel = \"Shop EU\""})
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	h.f.Now = func() time.Time { return testNow }

	// --max 5: maria has 5 jobs (4 pending + 1 reserved), the others fewer.
	code := h.run("monitor", "--all-contexts", "--max", "5", "--window", "1m", "--json", "--parallel", "2")
	if code != ExitUnhealthy {
		t.Fatalf("exit %d, want %d: %s", code, ExitUnhealthy, h.errOut.String())
	}
	var doc struct {
		SchemaVersion int  `json:"schema_version"`
		Healthy       bool `json:"healthy"`
		ExitCode      int  `json:"exit_code"`
		Contexts      []struct {
			Context    string  `json:"context"`
			Production bool    `json:"production"`
			Label      *string `json:"label"`
			Target     string  `json:"target"`
			ExitCode   int     `json:"exit_code"`
			Error      *string `json:"error"`
			Report     *struct {
				Failed int64 `json:"failed"`
				Queues []struct {
					Queue                   string `json:"queue"`
					Size, Pending, Reserved int64
					OldestPendingAgeSeconds int64 `json:"oldest_pending_age_seconds"`
				} `json:"queues"`
				Breaches []struct{ Measure string } `json:"breaches"`
			} `json:"report"`
		} `json:"contexts"`
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, h.out.String())
	}
	if doc.Healthy || doc.ExitCode != int(ExitUnhealthy) || len(doc.Contexts) != 3 {
		t.Fatalf("document %+v", doc)
	}
	want := map[string]struct {
		driver                    string
		size, pending, age, fails int64
		code                      ExitCode
	}{
		"lite":  {"sqlite:", 2, 1, 60, 3, ExitOK},
		"maria": {"mysql://", 5, 4, 1200, 0, ExitUnhealthy},
		"pg":    {"postgres://", 3, 2, 300, 1, ExitOK},
	}
	for i, c := range doc.Contexts {
		w := want[c.Context]
		if i > 0 && doc.Contexts[i-1].Context > c.Context {
			t.Errorf("contexts out of order: %s after %s", c.Context, doc.Contexts[i-1].Context)
		}
		if c.Error != nil || c.Report == nil || len(c.Report.Queues) != 1 {
			t.Fatalf("%s: %+v", c.Context, c)
		}
		q := c.Report.Queues[0]
		if q.Queue != "default" || q.Size != w.size || q.Pending != w.pending || q.Reserved != 1 ||
			q.OldestPendingAgeSeconds != w.age || c.Report.Failed != w.fails || c.ExitCode != int(w.code) ||
			!strings.HasPrefix(c.Target, w.driver) {
			t.Errorf("%s: %+v %+v, want %+v", c.Context, c, q, w)
		}
	}
	if m := doc.Contexts[1]; m.Context != "maria" || !m.Production || m.Label == nil || *m.Label != "Shop EU" || len(m.Report.Breaches) != 1 {
		t.Errorf("maria: %+v", m)
	}
	if got := h.errOut.String(); got != "maria: unhealthy: queue default: size 5 ≥ 5\n" {
		t.Errorf("stderr %q", got)
	}

	// Piped: one TSV table, the context first.
	if code := h.run("monitor", "--all-contexts", "--window", "1m"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	wantTSV := "lite\tdefault\t2\t1\t0\t1\t0\t60\t3\nmaria\tdefault\t5\t4\t0\t1\t0\t1200\t0\npg\tdefault\t3\t2\t0\t1\t0\t300\t1\n"
	if h.out.String() != wantTSV {
		t.Errorf("TSV:\n%q\nwant\n%q", h.out.String(), wantTSV)
	}

	// A terminal: a section per app, headed by its context mark and target.
	h.f.IO.SetStdoutTTY(true)
	if code := h.run("monitor", "--contexts", "maria,lite", "--max-failed", "3", "--window", "1m"); code != ExitUnhealthy {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	out := h.out.String()
	// In the order asked for.
	liteAt := strings.Index(out, "\n\ncontext lite · sqlite:"+strings.TrimPrefix(liteDSN, "sqlite:")+" table failed_jobs: unhealthy (1 breach)\nQUEUE")
	mariaAt := strings.Index(out, "context maria (Shop EU) [PRODUCTION] · mysql://")
	if mariaAt != 0 || liteAt < 0 || strings.Count(out, "QUEUE") != 2 || !strings.Contains(out, "[PRODUCTION] · mysql://") {
		t.Errorf("sections:\n%s", out)
	}
	if h.errOut.String() != "lite: unhealthy: all monitored queues: failed 3 ≥ 3 in 1m0s\n" {
		t.Errorf("stderr %q", h.errOut.String())
	}
}

// An app that cannot be reached does not hide the others, and its code
// (5) is worse than unhealthy (8).
func TestMonitorAllContextsWorstExitCode(t *testing.T) {
	okDSN, _ := queueDB(t, "sqlite", 1, time.Minute, 0)
	goneDSN := "sqlite:" + filepath.Join(t.TempDir(), "nope", "x.sqlite")
	path := writeContexts(t, map[string]string{"ok": okDSN, "gone": goneDSN}, nil)
	h := newHarness(t, false)
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	code := h.run("monitor", "--all-contexts", "--max", "1", "--json")
	if code != ExitUnreachable {
		t.Fatalf("exit %d, want %d: %s", code, ExitUnreachable, h.errOut.String())
	}
	var doc struct {
		ExitCode int `json:"exit_code"`
		Contexts []struct {
			Context  string
			ExitCode int     `json:"exit_code"`
			Error    *string `json:"error"`
			Report   *json.RawMessage
		}
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.ExitCode != int(ExitUnreachable) || len(doc.Contexts) != 2 {
		t.Fatalf("%v %s", err, h.out.String())
	}
	// The document is pinned (docs/json.md), temporary paths replaced.
	got := strings.ReplaceAll(h.out.String(), strings.TrimPrefix(okDSN, "sqlite:"), "OK.sqlite")
	got = regexp.MustCompile(`"error": "configuration: (?:[^"\\]|\\.)*"`).ReplaceAllString(got, `"error": "ERROR"`)
	golden := filepath.Join("testdata", "json", "monitor-all-contexts.golden.json")
	if *updateContextGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != got {
		t.Errorf("monitor --all-contexts --json differs from %s (%v; -update-context-json rewrites it):\n%s", golden, err, got)
	}
	gone, ok := doc.Contexts[0], doc.Contexts[1]
	if gone.Error == nil || gone.Report != nil || gone.ExitCode != int(ExitUnreachable) || ok.Report == nil || ok.ExitCode != int(ExitUnhealthy) {
		t.Errorf("per context: %+v %+v", gone, ok)
	}
	if !strings.Contains(h.errOut.String(), "gone: error (exit 5): configuration: context gone: dsn: SQLite database") || !strings.Contains(h.errOut.String(), "ok: unhealthy: queue default: size 2 ≥ 1") {
		t.Errorf("stderr %q", h.errOut.String())
	}
	if got := worstExit(ExitOK, ExitUnhealthy, ExitSchema); got != ExitSchema {
		t.Errorf("worstExit = %d", got)
	}
	if got := worstExit(ExitUnreachable, ExitError, ExitUnhealthy); got != ExitError {
		t.Errorf("worstExit = %d", got)
	}
	// No contexts at all is a configuration error, said once.
	empty := filepath.Join(t.TempDir(), "empty.toml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": empty})
	if code := h.run("monitor", "--all-contexts"); code != ExitUnreachable || !strings.Contains(h.errOut.String(), "--all-contexts: no contexts in "+empty) {
		t.Errorf("no contexts: %d %q", code, h.errOut.String())
	}
	withEnv(h, map[string]string{"JOBTRIAGE_CONFIG": path})
	if code := h.run("monitor", "--contexts", "ok,nope"); code != ExitUsage || !strings.Contains(h.errOut.String(), `--contexts: no context "nope"`) {
		t.Errorf("unknown context: %d %q", code, h.errOut.String())
	}
}
