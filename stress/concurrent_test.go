package stress

import (
	"encoding/json"
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
