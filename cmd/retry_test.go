package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/follow"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func TestNewCmdRetryFollowFlags(t *testing.T) {
	parse := func(args ...string) (*RetryOptions, error) {
		h := newHarness(t, false)
		var got *RetryOptions
		cmd := NewCmdRetry(h.f, func(_ context.Context, o *RetryOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SetOut(h.errOut)
		cmd.SetErr(h.errOut)
		err := cmd.Execute()
		return got, err
	}
	o, err := parse("all", "--follow", "--follow-timeout", "30s", "--canary", "3", "--canary-success", "80%", "--rate", "120/m", "--stop-after-failures", "5")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Follow || o.FollowTimeout != 30*time.Second || o.Canary != 3 || o.canaryShare != 0.8 || o.rate != 2 || o.StopAfterFailures != 5 {
		t.Errorf("parsed %+v", o)
	}
	o, err = parse("all")
	if err != nil || o.Follow || o.FollowTimeout != DefaultFollowTimeout || o.canaryShare != 1 || o.rate != 0 || o.followed() {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"all", "--stop-after-failures", "3"}, "needs --follow"},
		{[]string{"all", "--canary-success", "50%"}, "needs --canary"},
		{[]string{"all", "--follow-timeout", "1m"}, "needs --follow or --canary"},
		{[]string{"all", "--follow", "--follow-timeout", "0s"}, "positive duration"},
		{[]string{"all", "--canary", "-1"}, `"--canary" flag: must be at least 1`},
		{[]string{"all", "--canary", "2", "--canary-success", "150%"}, "--canary-success"},
		{[]string{"all", "--rate", "fast"}, "--rate"},
		{[]string{"all", "--follow", "--stop-after-failures", "-2"}, "must be at least 1"},
	} {
		_, err := parse(c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || exitCodeFor(err) != ExitUsage {
			t.Errorf("%v: %v (exit %d), want a usage error with %q", c.args, err, exitCodeFor(err), c.want)
		}
	}
}

// followFixture is a SQLite Laravel database with n failed jobs of one
// class, oldest first.
func followFixture(t *testing.T, n int) (*sqlstore.Store, []string) {
	t.Helper()
	return followFixtureOn(t, n, sqlstore.SchemaLaravel8)
}

func followFixtureOn(t *testing.T, n int, v sqlstore.SchemaVariant) (*sqlstore.Store, []string) {
	t.Helper()
	s := sqltest.OpenLaravel(t, "sqlite", v, time.UTC)
	var uuids []string
	for i := 1; i <= n; i++ {
		u := fmt.Sprintf("aaaaaaaa-0000-4000-8000-%012d", i)
		uuids = append(uuids, u)
		sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default",
			Payload:   `{"uuid":"` + u + `","displayName":"App\\Jobs\\Charge","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Charge","command":"O:15:\"App\\Jobs\\Charge\":0:{}"}}`,
			Exception: "RuntimeException: Gateway down in /app/Charge.php:9\nStack trace:\n#0 {main}", FailedAt: fmt.Sprintf("2026-11-30 10:00:%02d", i)})
	}
	return s, uuids
}

// fakeWorker works the jobs table as a worker does: it reserves each job,
// then deletes it, and for the uuids fail says are broken writes the
// failed_jobs row Laravel's failer writes. It returns the uuids it ran
// and the ones it failed.
type fakeWorker struct {
	s    *sqlstore.Store
	fail func(uuid string) bool
	mu   sync.Mutex
	ran  []string
	bad  []string
}

func (w *fakeWorker) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		db := w.s.DB()
		for ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
			var rows []struct {
				ID      int64  `db:"id"`
				Payload string `db:"payload"`
			}
			if err := db.Select(&rows, "SELECT id, payload FROM jobs ORDER BY id LIMIT 1"); err != nil || len(rows) == 0 {
				continue
			}
			r := rows[0]
			u := r.Payload[len(`{"uuid":"`) : len(`{"uuid":"`)+36]
			if _, err := db.Exec("UPDATE jobs SET reserved_at = 1 WHERE id = ?", r.ID); err != nil {
				continue
			}
			time.Sleep(5 * time.Millisecond)
			if _, err := db.Exec("DELETE FROM jobs WHERE id = ?", r.ID); err != nil {
				continue
			}
			w.mu.Lock()
			if w.fail(u) {
				w.bad = append(w.bad, u)
				w.mu.Unlock()
				uu := u
				sqltest.InsertFailed(t, w.s, sqltest.FailedFixture{UUID: &uu, Connection: "database", Queue: "default", Payload: r.Payload,
					Exception: "App\\Exceptions\\CardDeclined: Card 4242 declined in /app/Charge.php:12\nStack trace:\n#0 {main}", FailedAt: "2026-12-01 00:00:00"})
				continue
			}
			w.ran = append(w.ran, u)
			w.mu.Unlock()
		}
	}()
}

type followRun struct {
	out, errOut string
	code        ExitCode
}

func runFollow(t *testing.T, s *sqlstore.Store, mutate func(*RetryOptions)) followRun {
	t.Helper()
	io, _, out, errOut := Test()
	opts := &RetryOptions{IO: io, Now: func() time.Time { return testNow }, Audit: func(auditEntry) error { return nil },
		All: true, Yes: true, FollowTimeout: 5 * time.Second, canaryShare: 1,
		followInterval: 10 * time.Millisecond, followGrace: 40 * time.Millisecond}
	opts.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: s, Now: func() time.Time { return testNow }, Location: time.UTC}, nil
	}
	mutate(opts)
	err := retryRun(context.Background(), opts)
	return followRun{out: out.String(), errOut: errOut.String(), code: exitCodeFor(err)}
}

func failedUUIDs(t *testing.T, s *sqlstore.Store) []string {
	t.Helper()
	var out []string
	if err := s.DB().Select(&out, "SELECT uuid FROM failed_jobs ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRetryFollowEveryJobSucceeds(t *testing.T) {
	s, uuids := followFixture(t, 4)
	w := &fakeWorker{s: s, fail: func(string) bool { return false }}
	w.start(t)
	r := runFollow(t, s, func(o *RetryOptions) { o.Follow = true })
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if !strings.Contains(r.out, "Followed 4 jobs: 4 done, 0 failed again, 0 unsettled") {
		t.Errorf("summary:\n%s", r.out)
	}
	// Piped: one line per change, each job ending done.
	for _, u := range uuids {
		if !strings.Contains(r.errOut, "done: "+u) {
			t.Errorf("no change line for %s:\n%s", u, r.errOut)
		}
	}
	if len(failedUUIDs(t, s)) != 0 {
		t.Errorf("failed_jobs not empty")
	}
}

// followJSON is the part of retry --json a follow test reads.
type followJSON struct {
	Retried int `json:"retried"`
	Follow  struct {
		Followed    int `json:"followed"`
		Done        int `json:"done"`
		FailedAgain int `json:"failed_again"`
		Jobs        []struct {
			UUID, State string
		} `json:"jobs"`
		NewFailures []struct {
			ExceptionClass string   `json:"exception_class"`
			Count          int      `json:"count"`
			IDs            []string `json:"ids"`
		} `json:"new_failures"`
	} `json:"follow"`
}

func decodeFollow(t *testing.T, r followRun) followJSON {
	t.Helper()
	var doc followJSON
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, r.out)
	}
	return doc
}

// followBroken runs retry all --follow --json over s while a fake worker
// fails the broken uuids again, and wants exit 9.
func followBroken(t *testing.T, s *sqlstore.Store, broken map[string]bool) (followJSON, *fakeWorker) {
	t.Helper()
	w := &fakeWorker{s: s, fail: func(u string) bool { return broken[u] }}
	w.start(t)
	r := runFollow(t, s, func(o *RetryOptions) { o.Follow = true; o.JSON = true })
	if r.code != ExitFailedAgain {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitFailedAgain, r.out, r.errOut)
	}
	return decodeFollow(t, r), w
}

// checkFollowStates: every followed job ended failed again if broken,
// done otherwise.
func checkFollowStates(t *testing.T, doc followJSON, broken map[string]bool) {
	t.Helper()
	for _, j := range doc.Follow.Jobs {
		if want := map[bool]string{true: "failed_again", false: "done"}[broken[j.UUID]]; j.State != want {
			t.Errorf("job %s: %s, want %s", j.UUID, j.State, want)
		}
	}
}

func TestRetryFollowReportsFailedAgainBySignature(t *testing.T) {
	s, uuids := followFixture(t, 5)
	broken := map[string]bool{uuids[1]: true, uuids[3]: true}
	doc, w := followBroken(t, s, broken)
	f := doc.Follow
	if doc.Retried != 5 || f.Followed != 5 || f.Done != 3 || f.FailedAgain != 2 || len(f.Jobs) != 5 {
		t.Errorf("doc %+v", doc)
	}
	checkFollowStates(t, doc, broken)
	if len(f.NewFailures) != 1 || f.NewFailures[0].ExceptionClass != `App\Exceptions\CardDeclined` || f.NewFailures[0].Count != 2 {
		t.Errorf("new failures %+v", f.NewFailures)
	}
	// What the follower reported is exactly what the worker did.
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ran) != 3 || len(w.bad) != 2 {
		t.Errorf("worker ran %v, failed %v", w.ran, w.bad)
	}
}

func TestRetryFollowTimesOut(t *testing.T) {
	s, _ := followFixture(t, 2) // no worker: the jobs wait
	r := runFollow(t, s, func(o *RetryOptions) { o.Follow = true; o.FollowTimeout = 100 * time.Millisecond })
	if r.code != ExitFollowTimeout {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitFollowTimeout, r.out, r.errOut)
	}
	if !strings.Contains(r.out, "2 unsettled (2 waiting, 0 running)") || !strings.Contains(r.out, "timeout passed with 2 jobs unsettled") {
		t.Errorf("summary:\n%s", r.out)
	}
}

func TestRetryCanaryStopsAndLeavesTheRest(t *testing.T) {
	s, uuids := followFixture(t, 6)
	w := &fakeWorker{s: s, fail: func(string) bool { return true }} // the cause is not fixed
	w.start(t)
	r := runFollow(t, s, func(o *RetryOptions) { o.Canary = 2 })
	if r.code != ExitFailedAgain {
		t.Fatalf("exit %d, want %d\n%s%s", r.code, ExitFailedAgain, r.out, r.errOut)
	}
	for _, want := range []string{"Retried 2 jobs", "Canaries: 0 of 2 done, 2 failed again", "the other 4 jobs were not retried",
		"New failures by signature:", `App\Exceptions\CardDeclined: Card 4242 declined`} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	// The 4 others never left failed_jobs; the 2 canaries are back.
	got := failedUUIDs(t, s)
	want := append(append([]string{}, uuids[2:]...), uuids[0], uuids[1])
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("failed_jobs holds %v, want %v", got, want)
	}
}

func TestRetryCanaryContinuesWithTheRest(t *testing.T) {
	s, uuids := followFixture(t, 6)
	w := &fakeWorker{s: s, fail: func(string) bool { return false }} // fixed
	w.start(t)
	r := runFollow(t, s, func(o *RetryOptions) { o.Canary = 2; o.Follow = true })
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	for _, want := range []string{"Retried 6 jobs", "Canaries: 2 of 2 done, 0 failed again, 0 unsettled (2 needed to succeed): retrying the rest.",
		"Followed 6 jobs: 6 done"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("output lacks %q:\n%s", want, r.out)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Canaries first: the two oldest ran before any other.
	if len(w.ran) != 6 || w.ran[0] != uuids[0] || w.ran[1] != uuids[1] {
		t.Errorf("worker ran %v", w.ran)
	}
}

// A canary that failed again and is back in failed_jobs is not retried
// again with the rest, when the share lets the rest go.
func TestRetryCanaryShareExcludesFailedCanaries(t *testing.T) {
	s, uuids := followFixture(t, 5)
	w := &fakeWorker{s: s, fail: func(u string) bool { return u == uuids[0] }}
	w.start(t)
	r := runFollow(t, s, func(o *RetryOptions) { o.Canary = 2; o.canaryShare = 0.5; o.Follow = true })
	if r.code != ExitFailedAgain {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if !strings.Contains(r.out, "Retried 5 jobs") || !strings.Contains(r.out, "Followed 5 jobs: 4 done, 1 failed again") {
		t.Errorf("output:\n%s", r.out)
	}
	if got := failedUUIDs(t, s); len(got) != 1 || got[0] != uuids[0] {
		t.Errorf("failed_jobs holds %v, want only the failed canary", got)
	}
}

func TestRetryBreakerStopsPushing(t *testing.T) {
	s, _ := followFixture(t, 40)
	w := &fakeWorker{s: s, fail: func(string) bool { return true }}
	w.start(t)
	// 20/s: batches of 2 every 100 ms; the worker fails each in ~10 ms.
	r := runFollow(t, s, func(o *RetryOptions) {
		o.Follow = true
		o.StopAfterFailures = 2
		o.rate = 20
		o.JSON = true
	})
	if r.code != ExitFailedAgain {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	var doc struct {
		Retried int `json:"retried"`
		Follow  struct {
			StoppedByBreaker bool `json:"stopped_by_breaker"`
			NotPushed        int  `json:"not_pushed"`
			FailedAgain      int  `json:"failed_again"`
		} `json:"follow"`
	}
	if err := json.Unmarshal([]byte(r.out), &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Follow.StoppedByBreaker || doc.Retried >= 40 || doc.Follow.NotPushed != 40-doc.Retried || doc.Follow.FailedAgain < 2 {
		t.Errorf("breaker: %+v", doc)
	}
	if n := len(failedUUIDs(t, s)); n != 40 {
		t.Errorf("%d rows in failed_jobs, want all 40 (not pushed, or failed again)", n)
	}
}

func TestRetryCanaryDryRunShowsThePlan(t *testing.T) {
	s, _ := followFixture(t, 5)
	r := runFollow(t, s, func(o *RetryOptions) { o.Canary = 3; o.Follow = true; o.DryRun = true; o.rate = 50 })
	if r.code != ExitOK {
		t.Fatalf("exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	want := "Plan: retry the 3 oldest as canaries and follow them; retry the other 2 jobs only if at least 3 of them (100%) succeed; follow every job until it ran or failed again; push at most 50/s."
	if !strings.Contains(r.out, want) || !strings.Contains(r.out, "Would retry 5 jobs") {
		t.Errorf("dry run:\n%s", r.out)
	}
	if len(failedUUIDs(t, s)) != 5 {
		t.Error("a dry run moved jobs")
	}
}

// TestRetryFollowOnALegacyTable: a failed_jobs table without a uuid column
// (Laravel 7, failed.driver "database") used to refuse --follow. The jobs
// that fail again are found by the payload uuid of the rows the worker
// adds, and the new failures name those rows by id, as failed lists them.
func TestRetryFollowOnALegacyTable(t *testing.T) {
	s, uuids := followFixtureOn(t, 4, sqlstore.SchemaLegacy)
	broken := map[string]bool{uuids[2]: true}
	doc, _ := followBroken(t, s, broken)
	f := doc.Follow
	if f.Done != 3 || f.FailedAgain != 1 || len(f.Jobs) != 4 {
		t.Fatalf("follow %+v", f)
	}
	checkFollowStates(t, doc, broken)
	var rowIDs []string
	if err := s.DB().Select(&rowIDs, "SELECT CAST(id AS CHAR) FROM failed_jobs"); err != nil {
		t.Fatal(err)
	}
	if len(f.NewFailures) != 1 || fmt.Sprint(f.NewFailures[0].IDs) != fmt.Sprint(rowIDs) {
		t.Errorf("new failures %+v, want the worker's row %v", f.NewFailures, rowIDs)
	}
}

func TestFollowPrinterLine(t *testing.T) {
	io, _, _, errOut := Test()
	p := &followPrinter{io: io, clock: follow.RealClock{}, start: testNow, total: 100, pushedN: 40, following: true}
	c := follow.Counts{Pushed: 40, Waiting: 18, Running: 2, Done: 18, FailedAgain: 2}
	// 20 settled in 10 s; 80 left at 0.5 s a job.
	if got, want := p.line(c, testNow.Add(10*time.Second)), "pushed 40 of 100 · running 2 · settled 20 · failed again 2 · about 40s left"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	if got := p.line(c, testNow.Add(100*time.Millisecond)); strings.Contains(got, "left") {
		t.Errorf("an ETA before the warm-up: %q", got)
	}
	// --rate alone: pushes and their ETA at the rate.
	paced := &followPrinter{io: io, clock: follow.RealClock{}, start: testNow, total: 100, pushedN: 40, rate: 10}
	if got, want := paced.line(c, testNow.Add(4*time.Second)), "pushed 40 of 100 · about 6s left"; got != want {
		t.Errorf("paced line %q, want %q", got, want)
	}
	// Not a terminal: changes are lines, no status line.
	p.changes([]follow.Change{{Job: triage.Pushed{ID: "u-1", Class: "App\\Jobs\\X", Queue: "default", Connection: "database"}, To: follow.Running, At: testNow}}, c)
	if got := errOut.String(); !strings.HasSuffix(got, "running: u-1 (App\\Jobs\\X, default on database)\n") || strings.Contains(got, "\r") {
		t.Errorf("piped change line %q", got)
	}
	// A terminal: one status line redrawn in place.
	io.SetStderrTTY(true)
	errOut.Reset()
	p.clock = fixedClock(testNow.Add(10 * time.Second))
	p.changes(nil, c)
	p.done()
	if got := errOut.String(); !strings.HasPrefix(got, "\r\033[Kpushed 40 of 100") || !strings.HasSuffix(got, "\r\033[K") {
		t.Errorf("terminal status %q", got)
	}
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time                         { return time.Time(c) }
func (c fixedClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// stateBackend is a queue backend that can say where its jobs are.
type stateBackend struct {
	triage.QueueBackend
	states triage.JobStates
}

func (b stateBackend) JobStates(context.Context, triage.JobStatesParams) (triage.JobStates, error) {
	return b.states, nil
}

// The composition root's lazy backend passes JobStates through (retry
// --follow of Redis jobs found none before it did), and answers Partial
// for a backend that cannot say, so absence is never taken for done.
func TestLazyBackendJobStates(t *testing.T) {
	want := triage.JobStates{ByUUID: map[string]triage.JobState{"u": triage.JobRunning}}
	l := &lazyBackend{lazy[triage.QueueBackend]{open: func(context.Context) (triage.QueueBackend, error) { return stateBackend{states: want}, nil }}}
	got, err := l.JobStates(context.Background(), triage.JobStatesParams{})
	if err != nil || got.ByUUID["u"] != triage.JobRunning || got.Partial {
		t.Errorf("JobStates through lazyBackend = %+v, %v", got, err)
	}
	blind := &lazyBackend{lazy[triage.QueueBackend]{open: func(context.Context) (triage.QueueBackend, error) { return stateBackend{}.QueueBackend, nil }}}
	if got, err := blind.JobStates(context.Background(), triage.JobStatesParams{}); err != nil || !got.Partial {
		t.Errorf("a backend without JobStates: %+v, %v; want Partial", got, err)
	}
	svc := &triage.Service{Router: triage.NewRouter(map[string]triage.Route{"redis": {Driver: triage.DriverRedis, Backend: l}}, nil, nil)}
	if svc.StateReaderFor("redis") == nil {
		t.Error("StateReaderFor(redis) is nil over a lazy backend")
	}
}
