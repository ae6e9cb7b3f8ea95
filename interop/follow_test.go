package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// followOrders is how many SettleOrder jobs a follow scenario fails, and
// followCanaries how many of them retry --canary tries first.
const (
	followOrders   = 8
	followCanaries = 3
	// followRunTimeout bounds one jobtriage retry --follow run: canaries,
	// the rest, the settle grace, a worker polling every second.
	followRunTimeout = 3 * time.Minute
)

// retryFollowDoc is the part of retry --json a follow run is judged by.
type retryFollowDoc struct {
	Retried int `json:"retried"`
	Follow  struct {
		Followed    int  `json:"followed"`
		Done        int  `json:"done"`
		FailedAgain int  `json:"failed_again"`
		Waiting     int  `json:"waiting"`
		Running     int  `json:"running"`
		TimedOut    bool `json:"timed_out"`
		NotPushed   int  `json:"not_pushed"`
		Canary      *struct {
			Size        int    `json:"size"`
			Done        int    `json:"done"`
			FailedAgain int    `json:"failed_again"`
			Decision    string `json:"decision"`
		} `json:"canary"`
		Jobs []struct {
			UUID  string `json:"uuid"`
			State string `json:"state"`
		} `json:"jobs"`
		NewFailures []struct {
			ExceptionMessage string   `json:"exception_message"`
			Count            int      `json:"count"`
			IDs              []string `json:"ids"`
		} `json:"new_failures"`
	} `json:"follow"`
}

// startWorker runs `php artisan queue:work` on the app's default connection
// in the background until the test ends, as a deployment's worker does.
func (a *laravelApp) startWorker(t *testing.T) {
	t.Helper()
	cmd := exec.Command(a.phpCmd, "artisan", "queue:work", "--queue=default", "--sleep=1", "--tries=1", "--max-time=600")
	cmd.Dir = a.dir
	cmd.Env = a.env
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting a worker: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		// The worker's own process group only: SIGTERM lets it finish
		// the job in hand, as a deploy's restart does.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		if t.Failed() {
			t.Logf("worker output:\n%s", out.String())
		}
	})
}

// retryFollow runs jobtriage retry in the app directory and decodes its
// --json document.
func (j jobtriage) retryFollow(t *testing.T, app *laravelApp, args ...string) (retryFollowDoc, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), followRunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.path, append([]string{"retry"}, args...)...)
	cmd.Dir = app.dir
	cmd.Env = append(append([]string{}, app.env...), "NO_COLOR=1")
	var out, errOut bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("jobtriage retry %s: timed out\nstderr: %s", strings.Join(args, " "), errOut.String())
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	t.Logf("jobtriage retry %s: exit %d\nstderr:\n%s", strings.Join(args, " "), code, errOut.String())
	var doc retryFollowDoc
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("retry --json: %v\n%s", err, out.String())
	}
	return doc, code, errOut.String()
}

// failedRows maps uuid to row id for every failed_jobs row, as jobtriage
// lists them.
func (j jobtriage) failedRows(t *testing.T, app *laravelApp) map[string]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), artisanTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, j.path, "failed", "--json", "--limit", "0")
	cmd.Dir = app.dir
	cmd.Env = append(append([]string{}, app.env...), "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("failed --json: %v", err)
	}
	var doc struct {
		Jobs []reportedJob `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, r := range doc.Jobs {
		rows[r.UUID] = r.RowID
	}
	return rows
}

// followMatchesWorker checks a follow against what the worker did: done
// exactly the orders it ran (every one but brokenOrder), failed again only
// brokenOrder. order maps a job's uuid to its order number.
func followMatchesWorker(t *testing.T, doc retryFollowDoc, order map[string]int, app *laravelApp, brokenOrder int) {
	t.Helper()
	var reportedDone, reportedFailed []int
	for _, j := range doc.Follow.Jobs {
		switch j.State {
		case "done":
			reportedDone = append(reportedDone, order[j.UUID])
		case "failed_again":
			reportedFailed = append(reportedFailed, order[j.UUID])
		}
	}
	var ran []int
	for _, r := range app.readResults(t) {
		if r.Class == `App\Jobs\SettleOrder` {
			n, _ := r.Args["order"].(float64)
			ran = append(ran, int(n))
		}
	}
	sort.Ints(ran)
	sort.Ints(reportedDone)
	if fmt.Sprint(reportedDone) != fmt.Sprint(ran) || len(ran) != followOrders-1 {
		t.Errorf("follow reports done %v; the worker ran %v", reportedDone, ran)
	}
	if fmt.Sprint(reportedFailed) != fmt.Sprint([]int{brokenOrder}) {
		t.Errorf("follow reports failed again %v, want [%d]", reportedFailed, brokenOrder)
	}
}

// TestFollowCanaryOnRealWorkers: on the database queue (PostgreSQL) and on
// Redis (failed_jobs in MariaDB), with a real Laravel 8.83 worker running:
//
//  1. the cause not fixed: retry --canary 3 re-queues the 3 oldest, the
//     worker fails them again, and the retry stops (exit 9): the other 5
//     rows stay in failed_jobs untouched (same row ids), the canaries are
//     back, and the canaries' exception is reported;
//  2. the cause fixed, one order broken for another reason: retry --canary
//     3 --follow retries the 3 oldest failures (orders 4-6 now: the first
//     canaries failed again after them), they succeed, then the rest; the
//     follow reports exactly what the worker did: 7 ran (the results file
//     names them) and the broken one failed again with its own exception
//     (exit 9).
func TestFollowCanaryOnRealWorkers(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	var pg, my dialect
	for _, d := range dialects(t) {
		switch d.name {
		case "postgres":
			pg = d
		case "mysql":
			my = d
		}
	}
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, c := range []struct {
			name string
			d    dialect
			env  func(t *testing.T) []string
		}{
			{"database", pg, func(*testing.T) []string { return nil }},
			{"redis", my, func(t *testing.T) []string { return newRedisQueue(t, "follow").env() }},
		} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				broken := filepath.Join(t.TempDir(), "broken")
				s := failScenario(t, lv, c.d, "interop:dispatch-orders", append(c.env(t), "INTEROP_BROKEN_FILE="+broken)...)
				if len(s.manifest.Failures) != followOrders {
					t.Fatalf("manifest lists %d orders, want %d", len(s.manifest.Failures), followOrders)
				}
				order := map[string]int{} // uuid → order number
				var uuids []string
				for i, f := range s.manifest.Failures {
					if f.Connection != c.name {
						t.Fatalf("%s failed on connection %q, want %s", f.Key, f.Connection, c.name)
					}
					order[f.UUID] = i + 1
					uuids = append(uuids, f.UUID)
				}
				before := bin.failedRows(t, s.app)
				s.app.startWorker(t)

				// 1. Not fixed: the canaries fail again, the rest stays.
				doc, code, _ := bin.retryFollow(t, s.app, "all", "--canary", fmt.Sprint(followCanaries), "--yes", "--json")
				if code != 9 {
					t.Fatalf("unfixed canary: exit %d, want 9", code)
				}
				cn := doc.Follow.Canary
				if doc.Retried != followCanaries || cn == nil || cn.Decision != "stop" || cn.FailedAgain != followCanaries ||
					doc.Follow.NotPushed != followOrders-followCanaries {
					t.Fatalf("unfixed canary: %+v", doc)
				}
				for _, j := range doc.Follow.Jobs {
					if order[j.UUID] > followCanaries || j.State != "failed_again" {
						t.Errorf("canary %s (order %d): %s, want one of the %d oldest, failed again", j.UUID, order[j.UUID], j.State, followCanaries)
					}
				}
				if len(doc.Follow.NewFailures) != 1 || doc.Follow.NewFailures[0].Count != followCanaries ||
					!strings.Contains(doc.Follow.NewFailures[0].ExceptionMessage, "Payment gateway unavailable") {
					t.Errorf("canaries' new failures: %+v", doc.Follow.NewFailures)
				}
				after := bin.failedRows(t, s.app)
				if len(after) != followOrders {
					t.Fatalf("%d rows in failed_jobs after the stop, want all %d", len(after), followOrders)
				}
				for _, u := range uuids[followCanaries:] {
					if after[u] != before[u] {
						t.Errorf("order %d: row %d became %d; the rest must stay untouched", order[u], before[u], after[u])
					}
				}
				for _, u := range uuids[:followCanaries] {
					if after[u] == 0 || after[u] == before[u] {
						t.Errorf("canary order %d: row %d → %d, want a new row (failed again)", order[u], before[u], after[u])
					}
				}
				if got := s.app.readResults(t); len(got) != 0 {
					t.Fatalf("jobs ran while the cause was not fixed: %v", got)
				}

				// 2. Fixed, but order 8 is cancelled: the canaries (orders 4-6,
				// the oldest rows now) pass, the rest is retried and followed.
				const brokenOrder = 8
				if err := os.WriteFile(broken, []byte(fmt.Sprintln(brokenOrder)), 0o644); err != nil {
					t.Fatal(err)
				}
				s.app.setFlag(t)
				doc, code, stderr := bin.retryFollow(t, s.app, "all", "--canary", fmt.Sprint(followCanaries), "--follow", "--yes", "--json")
				if code != 9 {
					t.Fatalf("fixed canary, one broken order: exit %d, want 9 (one failed again)", code)
				}
				f := doc.Follow
				if doc.Retried != followOrders || f.Canary == nil || f.Canary.Decision != "continue" || f.Canary.Done != followCanaries ||
					f.Followed != followOrders || f.Done != followOrders-1 || f.FailedAgain != 1 || f.Waiting+f.Running != 0 || f.TimedOut {
					t.Fatalf("fixed canary: %+v", doc)
				}
				var canaries []int
				for _, j := range f.Jobs[:followCanaries] {
					canaries = append(canaries, order[j.UUID])
				}
				if fmt.Sprint(canaries) != "[4 5 6]" {
					t.Errorf("canaries were orders %v, want [4 5 6] (the oldest failed_jobs rows)", canaries)
				}
				followMatchesWorker(t, doc, order, s.app, brokenOrder)
				if len(f.NewFailures) != 1 || !strings.Contains(f.NewFailures[0].ExceptionMessage, fmt.Sprintf("Order %d was cancelled", brokenOrder)) {
					t.Errorf("new failures %+v", f.NewFailures)
				}
				left := bin.failedRows(t, s.app)
				if len(left) != 1 || left[uuids[brokenOrder-1]] == 0 {
					t.Errorf("failed_jobs holds %v, want only order %d", left, brokenOrder)
				}
				// Piped stderr has one line per change, among them the
				// broken order failing again.
				if !strings.Contains(stderr, "failed again: "+uuids[brokenOrder-1]) {
					t.Errorf("no change line for the failed order on stderr")
				}
			})
		}
	})
}

// TestFollowOnALegacyFailedJobsTable: an app whose failed_jobs has no uuid
// column (the 7.x table, queue.failed.driver "database": Laravel 8.83's
// DatabaseFailedJobProvider writes no uuid) on MariaDB, with a real worker.
// retry --follow finds the job that failed again by the payload uuid of the
// row the worker added, reports exactly what the worker did, and names the
// new failure by its row id, as failed lists it.
func TestFollowOnALegacyFailedJobsTable(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	var my dialect
	for _, d := range dialects(t) {
		if d.name == "mysql" {
			my = d
		}
	}
	forEachLaravelWhere(t, laravel8Skeleton, func(t *testing.T, lv laravelTarget) {
		broken := filepath.Join(t.TempDir(), "broken")
		s := failScenario(t, lv, my, "interop:dispatch-orders", "QUEUE_FAILED_DRIVER=database", "INTEROP_FAILED_SCHEMA=legacy",
			"INTEROP_BROKEN_FILE="+broken)
		if len(s.manifest.Failures) != followOrders {
			t.Fatalf("manifest lists %d orders, want %d", len(s.manifest.Failures), followOrders)
		}
		order := map[string]int{}
		for i, f := range s.manifest.Failures {
			order[f.UUID] = i + 1
		}
		if rows := bin.failedRows(t, s.app); len(rows) != 1 {
			// Legacy rows have no uuid: every row lists under "".
			t.Fatalf("failed --json lists uuids %v, want none (a table without a uuid column)", rows)
		}
		const brokenOrder = 5
		if err := os.WriteFile(broken, []byte(fmt.Sprintln(brokenOrder)), 0o644); err != nil {
			t.Fatal(err)
		}
		s.app.setFlag(t)
		s.app.startWorker(t)

		doc, code, stderr := bin.retryFollow(t, s.app, "all", "--follow", "--yes", "--json")
		if code != 9 {
			t.Fatalf("exit %d, want 9 (one failed again)", code)
		}
		f := doc.Follow
		if doc.Retried != followOrders || f.Followed != followOrders || f.Done != followOrders-1 || f.FailedAgain != 1 || f.TimedOut {
			t.Fatalf("follow: %+v", doc)
		}
		followMatchesWorker(t, doc, order, s.app, brokenOrder)
		left := bin.failedRows(t, s.app)
		row, ok := left[""]
		if len(left) != 1 || !ok {
			t.Fatalf("failed_jobs after the retry: %v, want the broken order's new row", left)
		}
		if len(f.NewFailures) != 1 || !strings.Contains(f.NewFailures[0].ExceptionMessage, fmt.Sprintf("Order %d was cancelled", brokenOrder)) ||
			fmt.Sprint(f.NewFailures[0].IDs) != fmt.Sprintf("[%d]", row) {
			t.Errorf("new failures %+v, want order %d's row %d", f.NewFailures, brokenOrder, row)
		}
		if !strings.Contains(stderr, "failed again: ") {
			t.Errorf("no change line for the failed order on stderr")
		}
	})
}
