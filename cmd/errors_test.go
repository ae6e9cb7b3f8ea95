package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
)

// TestExitCodeFor: the one mapping from errors to the README's exit codes,
// through wrapping.
func TestExitCodeFor(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("doing it: %w", err) }
	for _, c := range []struct {
		err  error
		want ExitCode
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitError},
		{FlagErrorf("--x"), ExitUsage},
		{wrap(triage.ErrInvalidInput), ExitUsage},
		{wrap(triage.ErrInvalidCursor), ExitUsage},
		{wrap(filestore.ErrReadOnly), ExitUsage},
		{wrap(ErrCancelled), ExitCancelled},
		{wrap(context.Canceled), ExitInterrupted},
		{wrap(triage.ErrNotFound), ExitNotFound},
		{wrap(triage.ErrUnreachable), ExitUnreachable},
		{wrap(errConfig), ExitUnreachable},
		{wrap(triage.ErrMissingTable), ExitSchema},
		{wrap(triage.ErrSchema), ExitSchema},
		{silentExit(ExitPartial), ExitPartial},
		{wrap(&exitError{code: ExitFailedAgain, err: triage.ErrNotFound}), ExitFailedAgain},
		{silentExit(ExitFollowTimeout), ExitFollowTimeout},
	} {
		if got := exitCodeFor(c.err); got != c.want {
			t.Errorf("exitCodeFor(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if !isCobraUsageError(errors.New(`unknown flag: --x`)) || isCobraUsageError(&exitError{code: ExitError, err: errors.New("unknown flag")}) ||
		isCobraUsageError(errors.New("unknown table")) {
		t.Error("isCobraUsageError")
	}
	if got := worstExit(ExitOK, ExitUnhealthy, ExitSchema); got != ExitSchema {
		t.Errorf("worstExit = %d", got)
	}
	if got := worstExit(ExitUnreachable, ExitError, ExitInterrupted); got != ExitInterrupted {
		t.Errorf("worstExit = %d", got)
	}
}

// TestRunPrintsOneLineAndTheUsageHint: Run prints an error once, on one
// line of stderr, adds the --help hint to usage errors only, and maps an
// interrupted context to 130 whatever the error says.
func TestRunPrintsOneLineAndTheUsageHint(t *testing.T) {
	h := newHarness(t, false)
	if code := h.run("failed", "--limit", "-1"); code != ExitUsage ||
		h.errOut.String() != "jobtriage: invalid argument \"-1\" for \"-L, --limit\" flag: must not be negative; want a whole number like 10\nRun 'jobtriage failed --help' for usage.\n" || h.out.Len() != 0 {
		t.Errorf("usage error: exit %d %q", code, h.errOut.String())
	}
	if code := h.run("nosuch"); code != ExitUsage || !strings.Contains(h.errOut.String(), "Run 'jobtriage --help' for usage.") {
		t.Errorf("unknown command: exit %d %q", code, h.errOut.String())
	}
	if code := h.run("show", "7", "--dsn", "sqlite:"+h.dir+"/nowhere/x.sqlite"); code != ExitUnreachable && code != ExitSchema {
		t.Errorf("a database that cannot be opened: exit %d %q", code, h.errOut.String())
	} else if strings.Contains(h.errOut.String(), "--help") {
		t.Errorf("a non-usage error got the usage hint: %q", h.errOut.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.out.Reset()
	h.errOut.Reset()
	dsn, _ := seed(t)
	if code := Run(ctx, h.f, []string{"failed", "--dsn", dsn}); code != ExitInterrupted || h.errOut.String() != "jobtriage: interrupted\n" {
		t.Errorf("interrupted: exit %d %q", code, h.errOut.String())
	}
}

// TestUnknownCommandKeepsCobrasSuggestion: the one error line still names
// the command cobra thinks was meant.
func TestUnknownCommandKeepsCobrasSuggestion(t *testing.T) {
	h := newHarness(t, false)
	if code := h.run("faild"); code != ExitUsage ||
		h.errOut.String() != "jobtriage: unknown command \"faild\" for \"jobtriage\". Did you mean this? failed\nRun 'jobtriage --help' for usage.\n" {
		t.Errorf("faild: exit %d %q", code, h.errOut.String())
	}
}

// TestOutsideAnAppIsOneLine: no app and no --dsn is one line naming the
// directory and the two ways out, no .env warnings, exit ExitUnreachable
// (a bad configuration).
func TestOutsideAnAppIsOneLine(t *testing.T) {
	h := newHarness(t, false)
	want := "jobtriage: configuration: not inside a Laravel app (no artisan file above " + h.dir + "): cd into the app or pass --dsn\n"
	if code := h.run("failed"); code != ExitUnreachable || h.errOut.String() != want {
		t.Errorf("failed outside an app: exit %d %q, want %q", code, h.errOut.String(), want)
	}
}
