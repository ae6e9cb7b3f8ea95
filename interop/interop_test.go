package interop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestFailedMatchesWorkerRows: whatever a real Laravel 8.83 worker wrote to
// failed_jobs, `jobtriage failed --json` reports job by job as the manifest
// says: class by the displayName rule, queue, connection, top exception.
func TestFailedMatchesWorkerRows(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s := failEverything(t, lv, d)
				// The committed rows are 8.83's; other versions would overwrite them.
				if os.Getenv("JOBTRIAGE_INTEROP_EXPORT") == "1" && lv.version == "8.83" {
					exportRows(t, s)
				}
				reported := bin.failed(t, d.dsn)
				checkReport(t, s, reported)
			})
		}
	})
}

func checkReport(t *testing.T, s *scenario, reported []reportedJob) {
	t.Helper()
	if len(reported) != len(s.manifest.Failures) {
		t.Errorf("failed --json lists %d jobs, the worker failed %d", len(reported), len(s.manifest.Failures))
	}
	byUUID := map[string]reportedJob{}
	for i, r := range reported {
		if _, dup := byUUID[r.UUID]; dup {
			t.Errorf("uuid %s reported twice", r.UUID)
		}
		byUUID[r.UUID] = r
		if i > 0 && r.RowID >= reported[i-1].RowID {
			t.Errorf("not newest first: row_id %d follows %d", r.RowID, reported[i-1].RowID)
		}
		// failed_at is UTC wall-clock text (app.timezone); read as UTC it must
		// fall inside the run. A tool that reads it as local time or shifts
		// it by the session zone lands hours away.
		if r.FailedAt.Before(s.started.Add(-2*time.Second)) || r.FailedAt.After(s.finished.Add(2*time.Second)) {
			t.Errorf("%s: failed_at %s is outside the run [%s, %s]", r.UUID, r.FailedAt.Format(time.RFC3339), s.started.UTC().Format(time.RFC3339), s.finished.UTC().Format(time.RFC3339))
		}
	}
	for _, want := range s.manifest.Failures {
		got, ok := byUUID[want.UUID]
		if !ok {
			t.Errorf("%s (uuid %s) missing from failed --json", want.Key, want.UUID)
			continue
		}
		wantView := reportedJob{
			UUID: want.UUID, Connection: want.Connection, Queue: want.Queue,
			Class: want.Class, ExceptionClass: want.ExceptionClass, ExceptionMessage: want.ExceptionMessage,
		}
		gotView := got
		gotView.RowID, gotView.FailedAt = 0, time.Time{}
		if diff := cmp.Diff(wantView, gotView); diff != "" {
			t.Errorf("%s: failed --json differs from what the worker wrote (-want +got):\n%s", want.Key, diff)
		}
		if got.RowID <= 0 {
			t.Errorf("%s: row_id %d, want the failed_jobs id", want.Key, got.RowID)
		}
	}
}

// exportRows refreshes testdata/laravel-rows/<dialect>.json with the rows the
// worker just wrote, for parsing tests elsewhere in the tree.
func exportRows(t *testing.T, s *scenario) {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "testdata", "laravel-rows", s.dialect.name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	s.app.mustArtisan(t, "interop:export-failed", path, "--manifest="+s.manifestPath)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exported %d failed_jobs rows to %s (%d bytes)", len(s.manifest.Failures), path, info.Size())
}

// TestRetryRunsOnRealWorker: jobs `jobtriage retry all` re-queues are run by
// a real worker with their original arguments, and a job whose stored
// retryUntil has expired is left alone unless --retry-until renews it.
func TestRetryRunsOnRealWorker(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s := failEverything(t, lv, d)
				s.app.setFlag(t)

				var renewable, expired []expectedFailure
				for _, f := range s.manifest.Failures {
					if f.RetryUntilExpires {
						expired = append(expired, f)
					} else {
						renewable = append(renewable, f)
					}
				}
				if len(expired) == 0 {
					t.Fatal("manifest has no job with an expiring retryUntil; the skip rule is untested")
				}

				rowIDs := map[string]int64{}
				for _, r := range bin.failed(t, d.dsn) {
					rowIDs[r.UUID] = r.RowID
				}
				_ = retryAll(t, bin, d.dsn) // skips the expired job, so it may exit non-zero
				s.app.drain(t)
				checkResults(t, s.app.readResults(t), renewable)
				left := bin.failed(t, d.dsn)
				if diff := cmp.Diff(uuidsOf(expired), reportedUUIDs(left)); diff != "" {
					t.Errorf("after retry all without --retry-until, failed_jobs should hold exactly the expired-retryUntil jobs (-want +got):\n%s", diff)
				}
				// Skipped means untouched: a job re-queued with its stale
				// retryUntil fails again at once and comes back with the same
				// uuid but a new row id.
				for _, r := range left {
					if r.RowID != rowIDs[r.UUID] {
						t.Errorf("%s was re-queued and failed again (row_id %d -> %d); an expired retryUntil must be skipped without --retry-until", r.UUID, rowIDs[r.UUID], r.RowID)
					}
				}

				if err := retryAll(t, bin, d.dsn, "--retry-until=30m"); err != nil {
					t.Errorf("retry all --retry-until=30m left nothing to skip, yet failed: %v", err)
				}
				s.app.drain(t)
				checkResults(t, s.app.readResults(t), s.manifest.Failures)
				if st := s.app.status(t); st.Failed != 0 || st.Jobs != 0 {
					t.Errorf("after retry --retry-until=30m: %d failed, %d queued; want both 0\nlaravel.log:\n%s", st.Failed, st.Jobs, s.app.log())
				}
			})
		}
	})
}

// retryAll runs `jobtriage retry all --yes` and returns its exit error.
// Skipping a job is reported with a non-zero exit (7 today); the queue state
// checked afterwards is the contract, so callers decide what an error means.
func retryAll(t *testing.T, bin jobtriage, dsn string, extra ...string) error {
	t.Helper()
	args := append([]string{"retry", "all", "--yes", "--dsn", dsn}, extra...)
	stdout, stderr, err := bin.run(args...)
	t.Logf("jobtriage %v: err=%v\nstdout: %s\nstderr: %s", args, err, stdout, stderr)
	return err
}

// checkResults wants exactly one result line per expected job, with the
// arguments the job was dispatched with.
func checkResults(t *testing.T, got []jobResult, want []expectedFailure) {
	t.Helper()
	wantResults := make([]jobResult, 0, len(want))
	for _, f := range want {
		wantResults = append(wantResults, f.Result)
	}
	if diff := cmp.Diff(sortedResults(t, wantResults), sortedResults(t, got)); diff != "" {
		t.Errorf("jobs run by the worker after retry (-want +got):\n%s", diff)
	}
}

// sortedResults orders results by their canonical JSON so that run order
// (queues, newest-first retry) does not matter, and so that numbers compare
// the same whether they came from the manifest or a result line.
func sortedResults(t *testing.T, rs []jobResult) []string {
	t.Helper()
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

func uuidsOf(fs []expectedFailure) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.UUID)
	}
	sort.Strings(out)
	return out
}

func reportedUUIDs(rs []reportedJob) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.UUID)
	}
	sort.Strings(out)
	return out
}
