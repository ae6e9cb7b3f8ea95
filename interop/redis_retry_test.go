package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// runInApp runs jobtriage the way an operator does on the app's host: in the
// app's directory, with the app's environment and no connection flags, so
// that everything it knows comes from the app profile.
func (j jobtriage) runInApp(app *laravelApp, args ...string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.path, args...)
	cmd.Dir = app.dir
	cmd.Env = append(append([]string{}, app.env...), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err = cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("jobtriage %s: timed out", strings.Join(args, " "))
	}
	return out.String(), errOut.String(), err
}

// failEverythingOnRedis is failEverything with the app queueing on Redis:
// the interop jobs (one per failure mode) are dispatched to, run from and
// failed off Redis lists by real Laravel workers, and land in the
// dialect's failed_jobs with connection "redis".
func failEverythingOnRedis(t *testing.T, lv laravelTarget, d dialect) (*scenario, *redisQueue) {
	t.Helper()
	q := newRedisQueue(t, "retry_"+d.name)
	s := failScenario(t, lv, d, "interop:dispatch", q.env()...)
	for _, f := range s.manifest.Failures {
		if f.Connection != "redis" {
			t.Fatalf("%s failed on connection %q, want redis (QUEUE_CONNECTION=redis)", f.Key, f.Connection)
		}
	}
	return s, q
}

// monitoredQueue is one queue of `monitor --json`.
type monitoredQueue struct {
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Size       int64  `json:"size"`
	Pending    int64  `json:"pending"`
}

// TestRedisRetryRunsOnRealWorker: on every database as the failed_jobs
// store, jobs a real worker failed off Redis are re-queued into Redis by
// `jobtriage retry all` run in the app directory with no flags; monitor's
// sizes equal Laravel's size(); a real Redis worker runs every fixable job
// with its original arguments, and only the job whose retryUntil expired
// stays behind, untouched.
func TestRedisRetryRunsOnRealWorker(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s, q := failEverythingOnRedis(t, lv, d)
				s.app.setFlag(t)
				var renewable, expired []expectedFailure
				for _, f := range s.manifest.Failures {
					if f.RetryUntilExpires {
						expired = append(expired, f)
					} else {
						renewable = append(renewable, f)
					}
				}
				if len(expired) == 0 || len(renewable) == 0 {
					t.Fatalf("manifest has %d renewable and %d expired jobs; both kinds are needed", len(renewable), len(expired))
				}

				stdout, stderr, err := bin.runInApp(s.app, "retry", "all", "--yes")
				t.Logf("retry all: err=%v\nstdout: %s\nstderr: %s", err, stdout, stderr)
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 7 {
					t.Fatalf("retry all exit %v, want 7 (the expired job skipped)", err)
				}
				if !strings.Contains(stdout, fmt.Sprintf("Retried %d jobs", len(renewable))) || !strings.Contains(stdout, "app interop") {
					t.Errorf("summary %q: want the count and the app named", stdout)
				}
				// Every fixable job is in a Redis list now, each once, with
				// attempts 0 and everything else as the worker left it.
				queued := map[string]int{}
				for _, name := range []string{"default", "emails"} {
					items, err := q.client.LRange(context.Background(), q.prefix+"queues:"+name, 0, -1).Result()
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range items {
						var p struct {
							UUID     string `json:"uuid"`
							ID       string `json:"id"`
							Attempts *int   `json:"attempts"`
						}
						if err := json.Unmarshal([]byte(it), &p); err != nil {
							t.Fatalf("queued payload is not JSON: %v", err)
						}
						if p.Attempts == nil || *p.Attempts != 0 || p.ID == "" {
							t.Errorf("%s: attempts %v id %q, want attempts 0 and the id kept", p.UUID, p.Attempts, p.ID)
						}
						queued[p.UUID]++
					}
				}
				for _, f := range renewable {
					if queued[f.UUID] != 1 {
						t.Errorf("%s (%s) queued %d times in Redis, want once", f.Key, f.UUID, queued[f.UUID])
					}
				}
				for _, f := range expired {
					if queued[f.UUID] != 0 {
						t.Errorf("%s: an expired retryUntil was queued", f.Key)
					}
				}

				// monitor counts the Redis queues as Laravel's size() does.
				out, stderr, err := bin.runInApp(s.app, "monitor", "--json")
				if err != nil {
					t.Fatalf("monitor --json: %v\n%s", err, stderr)
				}
				var rep struct {
					Queues []monitoredQueue `json:"queues"`
				}
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("monitor --json: %v\n%s", err, out)
				}
				var redisSize int64
				for _, m := range rep.Queues {
					if m.Connection == "redis" {
						redisSize += m.Size
					}
				}
				if st := s.app.status(t); int64(st.Jobs) != redisSize || redisSize != int64(len(renewable)) {
					t.Errorf("monitor counts %d jobs on redis, Laravel's size() %d, retried %d\n%s", redisSize, st.Jobs, len(renewable), out)
				}

				s.app.drain(t)
				checkResults(t, s.app.readResults(t), renewable)
				left := bin.failed(t, d.dsn)
				if diff := cmp.Diff(uuidsOf(expired), reportedUUIDs(left)); diff != "" {
					t.Errorf("after retry all, failed_jobs should hold exactly the expired-retryUntil jobs (-want +got):\n%s", diff)
				}

				// A second run finds nothing to push twice: the markers hold.
				stdout, _, _ = bin.runInApp(s.app, "retry", "all", "--yes")
				if !strings.Contains(stdout, "Retried 0 jobs") {
					t.Errorf("second retry all: %q, want nothing retried", stdout)
				}
			})
		}
	})
}
