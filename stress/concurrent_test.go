package stress

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// retryReport is the part of `retry --json` this test reads.
type retryReport struct {
	Retried int      `json:"retried"`
	IDs     []string `json:"ids"`
}

// TestRetryAllTwiceAtOnce starts two `retry all` processes at the same
// moment over one backlog, as two on-call engineers might: between them they
// must move every job exactly once, and each job must be reported by the
// process that moved it and by no other.
func TestRetryAllTwiceAtOnce(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			s := seed(t, driver, seedRows)
			race := time.Now()
			args := []string{"retry", "all", "--yes", "--json", "--dsn", s.dsn}
			a, b := bin.start(t, args...), bin.start(t, args...)
			reports := make([]retryReport, 2)
			for i, p := range []*process{a, b} {
				if code := p.wait(t); code != 0 {
					t.Fatalf("retry %d exited %d: %s", i+1, code, p.stderr.String())
				}
				if err := json.Unmarshal(p.stdout.Bytes(), &reports[i]); err != nil {
					t.Fatalf("retry %d: --json output: %v\n%.500s", i+1, err, p.stdout.String())
				}
			}
			t.Logf("both runs done in %s: %d and %d jobs", time.Since(race).Round(time.Millisecond), reports[0].Retried, reports[1].Retried)
			if sum := reports[0].Retried + reports[1].Retried; sum != seedRows {
				t.Errorf("the two runs report %d retried jobs between them, want %d", sum, seedRows)
			}
			reportedBy := make(map[string]int, seedRows)
			for i, r := range reports {
				if len(r.IDs) != r.Retried {
					t.Errorf("retry %d reports %d retried but lists %d ids", i+1, r.Retried, len(r.IDs))
				}
				for _, id := range r.IDs {
					if other, dup := reportedBy[id]; dup {
						t.Fatalf("job %s reported retried by run %d and by run %d", id, other+1, i+1)
					}
					reportedBy[id] = i
				}
			}
			s.allMovedIntact(t)
			t.Logf("%s: total %s", driver, time.Since(start).Round(time.Millisecond))
		})
	}
}

// dryRunRounds and dryRunRows size TestRetryAllBesideDryRun: the race is
// decided in the first batch, so many small backlogs beat one large one.
const (
	dryRunRounds = 8
	dryRunRows   = 3000
)

// TestRetryAllBesideDryRun starts `retry all --dry-run` (what an operator's
// confirmation prompt runs first) and `retry all --yes` at the same moment:
// the dry run only counts, so the real retry must still move every job. A
// dry run that locks its batches makes the retry skip them and leave them
// behind in failed_jobs.
func TestRetryAllBesideDryRun(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			for round := 1; round <= dryRunRounds; round++ {
				s := seed(t, driver, dryRunRows)
				dry := bin.start(t, "retry", "all", "--dry-run", "--dsn", s.dsn)
				real := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
				for _, p := range []*process{dry, real} {
					if code := p.wait(t); code != 0 {
						t.Fatalf("round %d: %s exited %d: %s", round, strings.Join(p.cmd.Args[1:4], " "), code, p.stderr.String())
					}
				}
				if moved := s.census(t, fmt.Sprintf("round %d", round)); moved != dryRunRows {
					t.Fatalf("round %d: retry all beside a dry run moved %d of %d jobs and left the rest in failed_jobs (%s)",
						round, moved, dryRunRows, strings.TrimSpace(real.stdout.String()))
				}
			}
			t.Logf("%s: %d rounds, total %s", driver, dryRunRounds, time.Since(start).Round(time.Millisecond))
		})
	}
}
