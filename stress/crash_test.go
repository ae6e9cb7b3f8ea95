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
			for i := 1; i <= kills; i++ {
				delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(1950*time.Millisecond)))
				p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
				killed := false
				select {
				case <-p.done:
				case <-time.After(delay):
					killed = p.cmd.Process.Kill() == nil // SIGKILL
					<-p.done
				}
				if !killed {
					if code := exitCode(t, p.err); code != 0 {
						t.Fatalf("run %d exited %d before its kill: %s", i, code, p.stderr.String())
					}
				}
				s.awaitNoSessions(t)
				moved := s.census(t, fmt.Sprintf("after kill %d (%s into the run)", i, delay))
				if killed && moved > 0 && moved < seedRows {
					midRun++
				}
				t.Logf("kill %d after %s: killed=%v, %d of %d jobs in jobs", i, delay, killed, moved, seedRows)
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
