package cmd

import (
	"context"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// readmeExitCodes are the codes of README's "Exit codes" table, in order.
func readmeExitCodes(t *testing.T) []int {
	t.Helper()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README has no Exit codes section")
	}
	table, _, _ = strings.Cut(strings.TrimLeft(table, "\n"), "\n\n")
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9]+) \|`).FindAllStringSubmatch(table, -1) {
		n, _ := strconv.Atoi(m[1])
		documented = append(documented, n)
	}
	return documented
}

// TestEveryDocumentedExitCodeHappens walks README's exit-code table: each
// code is provoked by a real failure of its kind (a bad flag, a missing
// table, a crossed threshold, a job that fails again …) through the
// command, and a code the table documents that nothing here provokes fails
// the test. TestExitCodeTableIsTheCode holds the table to errors.go.
func TestEveryDocumentedExitCodeHappens(t *testing.T) {
	run := func(t *testing.T, args ...string) ExitCode {
		t.Helper()
		h := newHarness(t, false)
		code := h.run(args...)
		t.Logf("%s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(h.errOut.String()))
		return code
	}
	scenarios := map[ExitCode]func(t *testing.T) ExitCode{
		ExitOK: func(t *testing.T) ExitCode { dsn, _ := seed(t); return run(t, "failed", "--dsn", dsn) },
		ExitError: func(t *testing.T) ExitCode {
			dsn, _ := monitorDB(t)
			busy, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer busy.Close()
			return run(t, "monitor", "--dsn", dsn, "--watch", "--listen", busy.Addr().String(), "--state-file", "none")
		},
		ExitUsage: func(t *testing.T) ExitCode {
			dsn, _ := seed(t)
			return run(t, "failed", "--limit", "many", "--dsn", dsn)
		},
		// Piped, without --yes: nobody can say yes.
		ExitCancelled: func(t *testing.T) ExitCode { dsn, _ := seed(t); return run(t, "retry", "all", "--dsn", dsn) },
		ExitNotFound:  func(t *testing.T) ExitCode { dsn, _ := seed(t); return run(t, "show", "999999", "--dsn", dsn) },
		ExitUnreachable: func(t *testing.T) ExitCode {
			return run(t, "failed", "--dsn", "sqlite:"+t.TempDir()+"/missing.sqlite")
		},
		// A database without Laravel's tables.
		ExitSchema: func(t *testing.T) ExitCode {
			return run(t, "failed", "--dsn", "sqlite:"+sqltest.NewEndpoint(t, "sqlite").Path)
		},
		// A seeded row failed on a Redis connection, outside an app: skipped.
		ExitPartial: func(t *testing.T) ExitCode { dsn, _ := seed(t); return run(t, "retry", "all", "--yes", "--dsn", dsn) },
		ExitUnhealthy: func(t *testing.T) ExitCode {
			dsn, _ := monitorDB(t)
			return run(t, "monitor", "--max", "1", "--dsn", dsn)
		},
		ExitFailedAgain: func(t *testing.T) ExitCode {
			s, _ := followFixture(t, 2)
			w := &fakeWorker{s: s, fail: func(string) bool { return true }}
			w.start(t)
			return runFollow(t, s, func(o *RetryOptions) { o.Follow = true }).code
		},
		ExitFollowTimeout: func(t *testing.T) ExitCode {
			s, _ := followFixture(t, 2) // no worker: the jobs wait
			return runFollow(t, s, func(o *RetryOptions) { o.Follow = true; o.FollowTimeout = 100 * time.Millisecond }).code
		},
		ExitInterrupted: func(t *testing.T) ExitCode {
			dsn, _ := seed(t)
			h := newHarness(t, false)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // as the signal handler does
			return Run(ctx, h.f, []string{"retry", "all", "--yes", "--dsn", dsn})
		},
	}
	documented := readmeExitCodes(t)
	if len(documented) < len(scenarios) {
		t.Errorf("README documents %v, fewer codes than the %d this test provokes", documented, len(scenarios))
	}
	for _, code := range documented {
		provoke, ok := scenarios[ExitCode(code)]
		if !ok {
			t.Errorf("README documents exit %d, and nothing here provokes it", code)
			continue
		}
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			if got := provoke(t); got != ExitCode(code) {
				t.Errorf("exit %d, want %d", got, code)
			}
		})
	}
}
