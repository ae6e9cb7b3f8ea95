package stress

import (
	"cmp"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// frozenRows is the backlog of the frozen-server test: at frozenRate the
// retry is still running, several batches in, when the relay goes silent.
const (
	frozenRows = 100_000
	frozenRate = "2000/s"
)

// frozenSlack is how much later than the bound it states the command may
// end: a process start, a rollback and the exit, not a measure of speed.
const frozenSlack = 5 * time.Second

// statedBound reads the bound the silence message states: "nothing for
// 8s: statement timeout + 3s".
var statedBound = regexp.MustCompile(`nothing for (\S+):`)

// TestFrozenServerEndsRetryAtItsStatedBound: a PostgreSQL connection that
// went silent mid-`retry all` ended it late (24.5 s with
// --statement-timeout 5s, whose message said 8 s; not within 90 s with the
// default), because every later call on the pool waited its own deadline.
// A relay in front of the server stops forwarding mid-run; the command
// exits 5 within the bound its one-line message states, on both servers,
// and after the relay is cut a re-run moves the rest, none lost or doubled.
func TestFrozenServerEndsRetryAtItsStatedBound(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql"} {
		for _, timeout := range []string{"5s", ""} { // "": the default
			t.Run(driver+"/"+cmp.Or(timeout, "default"), func(t *testing.T) {
				s := seed(t, driver, frozenRows)
				r := sqltest.StartRelay(t, s.ep)
				args := []string{"retry", "all", "--yes", "--dsn", sqltest.DSN(r.Via(s.ep))}
				if timeout != "" {
					args = append(args, "--statement-timeout", timeout)
				}
				p := bin.start(t, args...)
				var frozen time.Time
				select {
				case <-p.done:
					t.Fatalf("retry ended (%v) before the relay froze: %s", p.err, p.stderr.String())
				case frozen = <-s.afterMoved(t, p.done, frozenRows/4, 0):
					r.Freeze()
				}
				code := p.wait(t)
				took := time.Since(frozen)
				stderr := strings.TrimSpace(p.stderr.String())
				t.Logf("exit %d %s after the freeze: %s", code, took.Round(time.Millisecond), stderr)
				m := statedBound.FindStringSubmatch(stderr)
				if code != 5 || m == nil || !strings.Contains(stderr, "stopped answering") {
					t.Fatalf("exit %d, want 5 with a message naming the silence and its bound: %s", code, stderr)
				}
				bound, err := time.ParseDuration(m[1])
				if err != nil {
					t.Fatalf("stated bound %q: %v", m[1], err)
				}
				if took > bound+frozenSlack {
					t.Errorf("exit %s after the freeze, the message states %s", took.Round(time.Millisecond), bound)
				}
				r.Cut()
				s.awaitNoSessions(t)
				moved := s.census(t, "after the freeze")
				if moved == 0 || moved == frozenRows {
					t.Errorf("%d of %d jobs moved: the relay did not freeze mid-retry", moved, frozenRows)
				}
				if code := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn).wait(t); code != 0 {
					t.Fatalf("the re-run exited %d", code)
				}
				s.allMovedIntact(t)
			})
		}
	}
}
