package interop

import (
	"encoding/json"
	"testing"
)

// TestPauseStopsARealWorker: on a Laravel whose workers read the pause keys
// (12.40+), a queue `jobtriage pause` paused is one a real worker takes no
// job from while it works the other queues, and takes jobs from again
// after `jobtriage resume`; a queue `php artisan queue:pause` paused is one
// `jobtriage monitor` shows paused, until `queue:resume`. The app keeps
// the pause in its default cache store (the database store of the 11+
// skeleton), and the queue sizes are artisan's own (`queue:monitor`).
func TestPauseStopsARealWorker(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravelWhere(t, laravelAtLeast13, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s := failEverything(t, lv, d)
				// Queue the interop jobs again and leave them pending.
				s.app.mustArtisan(t, "interop:dispatch", "--manifest="+s.manifestPath)

				size := func(queue string) int64 {
					t.Helper()
					out := s.app.mustArtisan(t, "queue:monitor", "database:"+queue, "--json")
					var qs []artisanMonitoredQueue
					if err := json.Unmarshal([]byte(out), &qs); err != nil || len(qs) != 1 {
						t.Fatalf("queue:monitor database:%s --json: %v\n%s", queue, err, out)
					}
					return qs[0].Size
				}
				jobtriage := func(args ...string) string {
					t.Helper()
					stdout, stderr, err := bin.runInApp(s.app, args...)
					if err != nil {
						t.Fatalf("jobtriage %v: %v\n%s\n%s", args, err, stderr, stdout)
					}
					return stdout
				}
				paused := func(queue string) bool {
					t.Helper()
					out := jobtriage("monitor", "--json")
					var rep struct {
						Queues []struct {
							Connection string `json:"connection"`
							Queue      string `json:"queue"`
							Paused     bool   `json:"paused"`
						} `json:"queues"`
					}
					if err := json.Unmarshal([]byte(out), &rep); err != nil {
						t.Fatalf("monitor --json: %v\n%s", err, out)
					}
					for _, q := range rep.Queues {
						if q.Connection == "database" && q.Queue == queue {
							return q.Paused
						}
					}
					t.Fatalf("monitor --json has no queue database:%s\n%s", queue, out)
					return false
				}
				work := func() string {
					t.Helper()
					out, _ := s.app.artisan(workerTimeout, "queue:work", "--stop-when-empty", "--tries=1", "--queue=emails,default")
					return out
				}

				emails := size("emails")
				if emails == 0 {
					t.Fatal("no job queued on emails: the pause would be untested")
				}
				jobtriage("pause", "database:emails", "--yes")
				if !paused("emails") {
					t.Error("monitor does not show the queue jobtriage paused as paused")
				}
				out := work()
				if got := size("emails"); got != emails {
					t.Errorf("a worker took %d jobs from the queue jobtriage paused\n%s", emails-got, out)
				}

				jobtriage("resume", "database:emails", "--yes")
				if paused("emails") {
					t.Error("monitor shows the queue jobtriage resumed as paused")
				}
				out = work()
				if got := size("emails"); got >= emails {
					t.Errorf("after resume a worker took no job from emails (%d of %d left)\n%s", got, emails, out)
				}

				s.app.mustArtisan(t, "queue:pause", "database:default")
				if !paused("default") {
					t.Error("monitor does not show the queue artisan paused as paused")
				}
				s.app.mustArtisan(t, "queue:resume", "database:default")
				if paused("default") {
					t.Error("monitor shows the queue artisan resumed as paused")
				}
			})
		}
	})
}
