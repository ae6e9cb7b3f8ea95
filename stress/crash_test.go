package stress

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRetryAllSurvivesSIGKILL kills `retry all` at random moments — almost
// always inside one of its batch transactions — and checks after every kill
// that each job is in exactly one of failed_jobs and jobs. A final run then
// moves the rest, and every job must sit in jobs once, payload unchanged.
//
// Most kills are timed by progress, not by the clock: the test watches jobs
// fill and kills once a random share of the remaining backlog has moved,
// plus a few milliseconds, so the kill lands mid-run however fast the
// machine moves rows (a clock schedule once missed every run on a fast
// machine). The others come a few hundred milliseconds after the start,
// around the first batch.
func TestRetryAllSurvivesSIGKILL(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	base := rngSeed(t)
	t.Logf("kill schedule seed %d (replay with %s=%d)", base, seedEnv, base)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			s := seed(t, driver, seedRows)
			rng := rand.New(rand.NewPCG(base, streamOf(driver)))
			kills := 5 + rng.IntN(4)
			midRun := 0
			moved := 0
			for i := 1; i <= kills; i++ {
				var when string
				var fire <-chan time.Time
				p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
				if rng.IntN(4) == 0 {
					delay := 10*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
					when, fire = delay.String()+" into the run", time.After(delay)
				} else {
					target := moved + 1 + rng.IntN(max(1, (seedRows-moved)*9/10))
					extra := time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
					when = fmt.Sprintf("%s after %d jobs were in jobs", extra, target)
					fire = s.afterMoved(t, p.done, target, extra)
				}
				killed := false
				select {
				case <-p.done:
				case <-fire:
					killed = p.cmd.Process.Kill() == nil // SIGKILL
					<-p.done
				}
				if !killed {
					if code := exitCode(t, p.err); code != 0 {
						t.Fatalf("run %d exited %d before its kill: %s", i, code, p.stderr.String())
					}
				}
				s.awaitNoSessions(t)
				before := moved
				moved = s.census(t, fmt.Sprintf("after kill %d (%s)", i, when))
				if killed && moved > before && moved < seedRows {
					midRun++
				}
				t.Logf("kill %d, %s: killed=%v, %d of %d jobs in jobs", i, when, killed, moved, seedRows)
			}
			final := time.Now()
			p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
			if code := p.wait(t); code != 0 {
				t.Fatalf("final retry exited %d: %s", code, p.stderr.String())
			}
			t.Logf("final run took %s: %s", time.Since(final).Round(time.Millisecond), p.stdout.String())
			s.allMovedIntact(t)
			// A schedule in which every kill hit before the first commit or
			// after the last proves nothing about mid-run crashes.
			if midRun == 0 {
				t.Errorf("no kill landed while part of the backlog was moved; the schedule (seed %d) proved nothing", base)
			}
			t.Logf("%s: %d kills, %d mid-run, total %s", driver, kills, midRun, time.Since(start).Round(time.Millisecond))
		})
	}
}

// afterMoved fires extra after jobs holds at least target rows, polling
// while the run lasts; it never fires if the run ends first.
func (s *seeded) afterMoved(t *testing.T, done <-chan struct{}, target int, extra time.Duration) <-chan time.Time {
	t.Helper()
	fire := make(chan time.Time, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			var n int
			if err := s.db.Get(&n, "SELECT COUNT(*) FROM jobs"); err != nil {
				continue // SQLite may be busy with the run's commit: look again
			}
			if n >= target {
				time.Sleep(extra)
				fire <- time.Now()
				return
			}
		}
	}()
	return fire
}
