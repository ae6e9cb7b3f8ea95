package interop

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// laravelAtLeast13: the target's artisan has `queue:failed --json` (13.10)
// and `queue:monitor --json` (12.x).
func laravelAtLeast13(lv laravelTarget) bool {
	major, _, _ := strings.Cut(lv.version, ".")
	n, err := strconv.Atoi(major)
	return err == nil && n >= 13
}

// artisanFailedJob is one element of `php artisan queue:failed --json`.
type artisanFailedJob struct {
	ID         string `json:"id"` // the payload uuid (database-uuids)
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Class      string `json:"class"`
	FailedAt   string `json:"failed_at"` // wall clock in app.timezone (UTC here)
}

// artisanMonitoredQueue is one element of `php artisan queue:monitor --json`.
type artisanMonitoredQueue struct {
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Size       int64  `json:"size"`
	Pending    int64  `json:"pending"`
}

// TestArtisanJSONAgrees: on a Laravel whose artisan speaks JSON, jobtriage
// run in the app directory gives artisan's own answers: `failed --json`
// lists exactly `queue:failed --json` (uuid, connection, queue, class by
// the displayName rule, failed_at), and with the interop jobs queued again
// `monitor --json` reports each queue's size and pending as
// `queue:monitor --json` does.
func TestArtisanJSONAgrees(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravelWhere(t, laravelAtLeast13, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s := failEverything(t, lv, d)

				var fromArtisan []artisanFailedJob
				out := s.app.mustArtisan(t, "queue:failed", "--json")
				if err := json.Unmarshal([]byte(out), &fromArtisan); err != nil {
					t.Fatalf("queue:failed --json: %v\n%s", err, out)
				}
				stdout, stderr, err := bin.runInApp(s.app, "failed", "--json", "--limit", "0")
				if err != nil {
					t.Fatalf("jobtriage failed --json: %v\n%s", err, stderr)
				}
				var doc struct {
					Jobs []reportedJob `json:"jobs"`
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
					t.Fatalf("failed --json: %v\n%s", err, stdout)
				}
				stringJobs := map[string]expectedFailure{}
				for _, f := range s.manifest.Failures {
					if f.Job != "" {
						stringJobs[f.UUID] = f
					}
				}
				if len(stringJobs) == 0 {
					t.Fatal("manifest has no string job; the class rule below is untested")
				}
				var fromTriage []artisanFailedJob
				for _, j := range doc.Jobs {
					class := j.Class
					// A known difference, pinned both ways: artisan names a
					// string job by its job string (Class@method), jobtriage
					// by the payload's displayName (the class alone).
					if f, ok := stringJobs[j.UUID]; ok && class == f.Class {
						class = f.Job
					}
					fromTriage = append(fromTriage, artisanFailedJob{ID: j.UUID, Connection: j.Connection, Queue: j.Queue, Class: class,
						FailedAt: j.FailedAt.UTC().Format(laravelWallClock)})
				}
				byID := func(a, b artisanFailedJob) bool { return a.ID < b.ID }
				sort.Slice(fromArtisan, func(i, j int) bool { return byID(fromArtisan[i], fromArtisan[j]) })
				sort.Slice(fromTriage, func(i, j int) bool { return byID(fromTriage[i], fromTriage[j]) })
				if len(fromArtisan) != len(s.manifest.Failures) {
					t.Errorf("queue:failed --json lists %d jobs, the worker failed %d", len(fromArtisan), len(s.manifest.Failures))
				}
				if diff := cmp.Diff(fromArtisan, fromTriage); diff != "" {
					t.Errorf("jobtriage failed --json vs php artisan queue:failed --json (-artisan +jobtriage):\n%s", diff)
				}

				// Queue the jobs again, leave them pending, and ask both.
				s.app.mustArtisan(t, "interop:dispatch", "--manifest="+s.manifestPath)
				for _, q := range monitorAgreesWithArtisan(t, bin, s.app, "database:default,database:emails") {
					if q.Size == 0 {
						t.Fatalf("queue:monitor shows %s:%s empty after a dispatch", q.Connection, q.Queue)
					}
				}
			})
		}
	})
}

// monitorAgreesWithArtisan asks `php artisan queue:monitor QUEUES --json`
// and `jobtriage monitor --json` with triageArgs (none: every queue it
// finds) and wants jobtriage's size and pending for each of artisan's
// queues; it returns artisan's answer.
func monitorAgreesWithArtisan(t *testing.T, bin jobtriage, app *laravelApp, queues string, triageArgs ...string) []artisanMonitoredQueue {
	t.Helper()
	var monitored []artisanMonitoredQueue
	out := app.mustArtisan(t, "queue:monitor", queues, "--json")
	if err := json.Unmarshal([]byte(out), &monitored); err != nil {
		t.Fatalf("queue:monitor --json: %v\n%s", err, out)
	}
	stdout, stderr, err := bin.runInApp(app, append([]string{"monitor", "--json"}, triageArgs...)...)
	if err != nil {
		t.Fatalf("jobtriage monitor --json %v: %v\n%s\n%s", triageArgs, err, stderr, stdout)
	}
	var rep struct {
		Queues []monitoredQueue `json:"queues"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("monitor --json: %v\n%s", err, stdout)
	}
	got := map[string]artisanMonitoredQueue{}
	for _, q := range rep.Queues {
		got[q.Connection+":"+q.Queue] = artisanMonitoredQueue(q)
	}
	for _, want := range monitored {
		if diff := cmp.Diff(want, got[want.Connection+":"+want.Queue]); diff != "" {
			t.Errorf("monitor --json %v vs queue:monitor --json for %s:%s (-artisan +jobtriage):\n%s", triageArgs, want.Connection, want.Queue, diff)
		}
	}
	return monitored
}
