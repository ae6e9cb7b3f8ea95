package interop

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestFailoverConnectionOnRealWorkers: an app whose default queue
// connection is the 11+ skeleton's `failover` (Laravel 12.34+:
// FailoverQueue pushes to database, else deferred, and pops, sizes and
// counts through database, its first). Real pushes through it wait in the
// database jobs table, and `jobtriage monitor failover:default` counts them
// as `php artisan queue:monitor failover:default` does, through the first
// connection. A real `queue:work failover` worker fails them; jobtriage
// `retry all`, run in the app directory, puts them back where
// FailoverQueue pushes (the first connection, which accepts them), monitor
// again agrees with artisan, and the failover worker runs every one.
//
// Observed on 13.31: the worker records the failures under the connection
// its job was popped from — "database", the first listed — not under
// "failover" (Job::fail reports the popping queue's connection name), so
// the rows retry through the database route; the test pins that, and
// would flag a Laravel that starts recording "failover".
func TestFailoverConnectionOnRealWorkers(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravelWhere(t, laravelAtLeast13, func(t *testing.T, lv laravelTarget) {
		s := failScenario(t, lv, sqliteDialect(t), "interop:dispatch-orders", "QUEUE_CONNECTION=failover")
		for _, j := range bin.failed(t, s.dialect.dsn) {
			if j.Connection != "database" {
				t.Errorf("%s failed on connection %q; 13.31 records the first failover connection, database", j.UUID, j.Connection)
			}
		}

		// The jobs again, pushed through FailoverQueue by Laravel itself,
		// then by jobtriage: both times monitor counts what artisan counts.
		s.app.mustArtisan(t, "interop:dispatch-orders", "--manifest="+filepath.Join(s.app.scratch, "again.json"))
		checkFailoverMonitor(t, bin, s, len(s.manifest.Failures))
		s.app.mustArtisan(t, "queue:clear", "database", "--queue=default", "--force")

		s.app.setFlag(t)
		stdout, stderr, err := bin.runInApp(s.app, "retry", "all", "--yes", "--json")
		if err != nil {
			t.Fatalf("retry all: %v\n%s\n%s", err, stdout, stderr)
		}
		var res struct {
			Retried int `json:"retried"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || res.Retried != len(s.manifest.Failures) {
			t.Fatalf("retry all --json: %s (%v), want %d retried", stdout, err, len(s.manifest.Failures))
		}
		checkFailoverMonitor(t, bin, s, len(s.manifest.Failures))
		s.app.drain(t)
		checkResults(t, s.app.readResults(t), s.manifest.Failures)
		if st := s.app.status(t); st.Failed != 0 || st.Jobs != 0 {
			t.Errorf("after the retry: %d failed, %d queued; want both 0\n%s", st.Failed, st.Jobs, s.app.log())
		}
	})
}

// checkFailoverMonitor: with n jobs queued on default, jobtriage and
// artisan count the failover connection's queue alike, through database.
func checkFailoverMonitor(t *testing.T, bin jobtriage, s *scenario, n int) {
	t.Helper()
	const queues = "failover:default,database:default"
	for _, q := range monitorAgreesWithArtisan(t, bin, s.app, queues, queues) {
		if q.Size != int64(n) {
			t.Errorf("queue:monitor counts %d jobs on %s:%s, want the %d queued", q.Size, q.Connection, q.Queue, n)
		}
	}
}
