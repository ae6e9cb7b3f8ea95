package cmd

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// parsed is what a NewCmdX test learns from one command line: the options
// runF received (nil when RunE refused the line before calling it), the exit
// code Run would map the error to, and the error's text.
type parsed[O any] struct {
	opts *O
	code ExitCode
	err  string
}

// parseWith runs args through the command newCmd builds, with runF
// capturing its options instead of running anything: flag parsing and
// validation only, no I/O. The command hangs under a root configured as
// NewCmdRoot configures it (flag errors are FlagErrors).
func parseWith[O any](t *testing.T, newCmd func(*Factory, func(context.Context, *O) error) *cobra.Command, args ...string) parsed[O] {
	t.Helper()
	return parseOn(t, false, newCmd, args...)
}

func parseOn[O any](t *testing.T, tty bool, newCmd func(*Factory, func(context.Context, *O) error) *cobra.Command, args ...string) parsed[O] {
	t.Helper()
	h := newHarness(t, tty)
	h.f.Service = nil // parsing must never open the store
	var p parsed[O]
	c := newCmd(h.f, func(_ context.Context, o *O) error { p.opts = o; return nil })
	root := &cobra.Command{Use: "jobtriage", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &FlagError{err} })
	root.AddCommand(c)
	root.SetArgs(append(fullPath(c), args...))
	root.SetOut(h.out)
	root.SetErr(h.errOut)
	err := root.ExecuteContext(context.Background())
	p.code = exitCodeFor(err)
	if isCobraUsageError(err) {
		p.code = ExitUsage
	}
	if err != nil {
		p.err = err.Error()
		if p.opts != nil {
			t.Fatalf("%v: runF ran although RunE failed: %v", args, err)
		}
	}
	return p
}

// fullPath is c's name (its own Use word), as typed after the program name.
func fullPath(c *cobra.Command) []string { return []string{c.Name()} }

// usageCases checks that every line in bad is refused as a usage error
// (exit 2) whose message contains the given text, and that runF never ran.
func usageCases[O any](t *testing.T, newCmd func(*Factory, func(context.Context, *O) error) *cobra.Command, bad map[string][]string) {
	t.Helper()
	for want, args := range bad {
		p := parseWith(t, newCmd, args...)
		if p.code != ExitUsage || p.opts != nil || !strings.Contains(p.err, want) {
			t.Errorf("%q: exit %d, err %q, ran %v; want exit %d with %q", args, p.code, p.err, p.opts != nil, ExitUsage, want)
		}
	}
}

// parseWithTTY is parseWith on a terminal (stdin and stdout).
func parseWithTTY[O any](t *testing.T, newCmd func(*Factory, func(context.Context, *O) error) *cobra.Command, args ...string) parsed[O] {
	t.Helper()
	return parseOn(t, true, newCmd, args...)
}

// fakeHarness is a harness whose commands run on an in-memory store
// (triagetest) holding n failed jobs: ids 1..n, uuids fakeUUID(i), on
// queue "default" (odd ids) or "emails" (even), connection "database",
// one a minute from 10:00 on testNow's day.
func fakeHarness(t *testing.T, tty bool, n int) (*harness, *triagetest.Store) {
	t.Helper()
	h := newHarness(t, tty)
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	for i := 1; i <= n; i++ {
		queue := "default"
		if i%2 == 0 {
			queue = "emails"
		}
		class := `App\\Jobs\\SendMail`
		st.Add(triagetest.Row{UUID: fakeUUID(i), Connection: "database", Queue: queue,
			Payload:   `{"uuid":"` + fakeUUID(i) + `","displayName":"` + class + `","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"data":{"commandName":"` + class + `","command":"O:17:\"App\\Jobs\\SendMail\":0:{}"}}`,
			Exception: "RuntimeException: SMTP down in /app/app/Jobs/SendMail.php:12\nStack trace:\n#0 {main}",
			FailedAt:  time.Date(testNow.Year(), testNow.Month(), testNow.Day(), 10, i, 0, 0, time.UTC).Format(time.DateTime)})
	}
	h.f.Service = func(context.Context) (*triage.Service, error) {
		return &triage.Service{Store: st, Now: h.f.Now, Location: time.UTC, Target: "fake table failed_jobs"}, nil
	}
	return h, st
}

func fakeUUID(i int) string { return fmt.Sprintf("%08d-aaaa-4aaa-8aaa-aaaaaaaaaaaa", i) }
