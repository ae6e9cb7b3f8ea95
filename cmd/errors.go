package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"

	"github.com/spf13/pflag"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// Exit codes; README's "Exit codes" table lists the same values.
const (
	ExitOK          ExitCode = 0 // success, including "nothing matched"
	ExitError       ExitCode = 1 // any other error
	ExitUsage       ExitCode = 2 // bad flag, argument or input
	ExitCancelled   ExitCode = 3 // the operator said no, or --yes was missing without a TTY
	ExitNotFound    ExitCode = 4 // an id that matches no failed job
	ExitUnreachable ExitCode = 5 // bad DSN/config, or the database cannot be reached
	ExitSchema      ExitCode = 6 // a Laravel table or column is missing
	ExitPartial     ExitCode = 7 // a bulk action skipped some jobs (each reported with a reason)
	ExitUnhealthy   ExitCode = 8 // monitor: a threshold was crossed
	// ExitFailedAgain: retry --follow/--canary: a followed job failed
	// again, or the canaries stopped the retry.
	ExitFailedAgain ExitCode = 9
	// ExitFollowTimeout: --follow-timeout passed with jobs unsettled.
	ExitFollowTimeout ExitCode = 10
	ExitInterrupted   ExitCode = 130 // SIGINT
)

// FlagError is a usage mistake: the message is followed by a hint at --help.
type FlagError struct{ err error }

func (e *FlagError) Error() string { return e.err.Error() }
func (e *FlagError) Unwrap() error { return e.err }

// FlagErrorf builds a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{fmt.Errorf(format, args...)}
}

// ErrCancelled is returned when the operator declines a confirmation.
var ErrCancelled = errors.New("cancelled")

// exitError carries a specific exit code with (or without) a message.
type exitError struct {
	code ExitCode
	err  error // nil: the command already said everything
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

// inputFileError refuses an input file that cannot be opened as a usage error.
func inputFileError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &exitError{code: ExitUsage, err: fmt.Errorf("cannot read %s: %w", sanitize.Line(path), err)}
}

// silentExit ends with code after the command has printed its own report.
func silentExit(code ExitCode) error { return &exitError{code: code} }

// exitCodeFor maps an error to its exit code: the one place that does.
func exitCodeFor(err error) ExitCode {
	var ee *exitError
	var fe *FlagError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &fe), errors.As(err, new(*pflag.InvalidValueError)), errors.Is(err, triage.ErrInvalidInput), errors.Is(err, triage.ErrInvalidCursor),
		errors.Is(err, filestore.ErrReadOnly), errors.Is(err, triage.ErrPauseUnsupported):
		return ExitUsage
	case errors.Is(err, ErrCancelled):
		return ExitCancelled
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, triage.ErrNotFound):
		return ExitNotFound
	case errors.Is(err, triage.ErrUnreachable), errors.Is(err, errConfig):
		return ExitUnreachable
	case errors.Is(err, triage.ErrMissingTable), errors.Is(err, triage.ErrSchema):
		return ExitSchema
	}
	return ExitError
}

// severity orders exit codes for monitor --all-contexts, which exits with the
// worst: ok, unhealthy, schema, unreachable, anything else, interrupted.
func severity(c ExitCode) int {
	if s, ok := map[ExitCode]int{ExitOK: 0, ExitUnhealthy: 1, ExitSchema: 2, ExitUnreachable: 3, ExitInterrupted: 5}[c]; ok {
		return s
	}
	return 4
}

// worstExit is the most severe of codes (ExitOK for none).
func worstExit(codes ...ExitCode) ExitCode {
	worst := ExitOK
	for _, c := range codes {
		if severity(c) > severity(worst) {
			worst = c
		}
	}
	return worst
}

// errConfig marks errors resolving where the database is.
var errConfig = errors.New("configuration")

// cobraSuggestHeader opens the block of close names cobra appends to an
// unknown command's error, one name a line after it.
const cobraSuggestHeader = "Did you mean this?"

// errorLine is the one line Run prints for an error: its first, with cobra's
// suggestions (on lines of their own) kept on it for "unknown command".
func errorLine(msg string) string {
	first, rest, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	_, after, ok := strings.Cut(rest, cobraSuggestHeader)
	if !ok {
		return sanitize.FirstLine(msg)
	}
	return strings.TrimSpace(first) + ". " + cobraSuggestHeader + " " + strings.Join(strings.Fields(after), ", ")
}

// cobraUsageRE matches the untyped errors cobra returns for bad arguments.
var cobraUsageRE = regexp.MustCompile(`^(unknown command|unknown flag|unknown shorthand flag|accepts |requires at least|requires at most|received |invalid argument|flag needs an argument|required flag)`)
