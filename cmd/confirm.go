package cmd

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// atPrompt is true while confirm waits for an answer: a SIGINT or SIGTERM
// then ends the process at once (see Main), since nothing has been done.
var atPrompt atomic.Bool

// confirm asks a yes/no question on the terminal. Without a terminal the
// answer must come from --yes, so that cron never hangs on a prompt.
func confirm(io *IOStreams, yes bool, question string) error {
	if yes {
		return nil
	}
	if !io.CanPrompt() {
		return &exitError{code: ExitCancelled, err: fmt.Errorf("%s — refusing without --yes when not running in a terminal", strings.TrimSuffix(question, "?"))}
	}
	fmt.Fprintf(io.ErrOut, "%s [y/N] ", question)
	atPrompt.Store(true)
	line, err := bufio.NewReader(io.In).ReadString('\n')
	atPrompt.Store(false)
	if err != nil && line == "" {
		return ErrCancelled
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrCancelled
}

// Audit phases. Each run of a destructive action writes two lines sharing
// one "run" id: an intent line before it changes anything (count 0), so
// that even a SIGKILLed run leaves a record, and an outcome line after it,
// with what it did and any error that ended it.
const (
	auditIntent  = "intent"
	auditOutcome = "outcome"
)

// auditEntry is one line of the audit log: who did what to which jobs.
type auditEntry struct {
	SchemaVersion int      `json:"schema_version"`
	Time          string   `json:"time"` // RFC 3339, whole seconds, UTC
	Run           string   `json:"run"`
	Phase         string   `json:"phase"` // auditIntent or auditOutcome ("" is written as auditOutcome)
	User          string   `json:"user"`
	Host          string   `json:"host"`
	Command       string   `json:"command"`
	Args          []string `json:"args"`
	Database      string   `json:"database"`
	// Context is the jobtriage context the command ran in ("" for none).
	Context string   `json:"context,omitempty"`
	Filter  any      `json:"filter,omitempty"`
	Count   int64    `json:"count"`
	IDs     []string `json:"ids,omitempty"`
	Skipped int      `json:"skipped,omitempty"`
	// Error is what ended the run early (outcome only).
	Error string `json:"error,omitempty"`
	// IDsOmitted says why an outcome line carries no ids although jobs
	// were touched: the full line could not be written.
	IDsOmitted string `json:"ids_omitted,omitempty"`
	// spooled are a bulk action's ids, written as "ids" from their spool.
	spooled *spool
}

// audited writes e's intent line, runs (not without that line), then writes
// the outcome line run fills in; a failing outcome line is the run's error
// when it had none. A nil audit records nothing (a dry run).
func audited(audit func(auditEntry) error, e auditEntry, run func(*auditEntry) error) error {
	if audit == nil {
		return run(&e)
	}
	e.Phase = auditIntent
	if err := audit(e); err != nil {
		return err
	}
	e.Phase = auditOutcome
	err := run(&e)
	e.Error = auditError(err)
	if aerr := audit(e); aerr != nil && err == nil {
		err = aerr
	}
	return err
}

// auditError is the outcome's "error": what ended the run early, if anything.
func auditError(err error) string {
	if err == nil {
		return ""
	}
	return sanitize.FirstLine(err.Error())
}

// auditRunID ties one process's intent and outcome lines together.
var auditRunID = sync.OnceValue(newAuditRunID)

// newAuditRunID is a fresh run id: the process's (auditRunID), or one per
// action where a process acts more than once (the terminal UI).
func newAuditRunID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return strconv.FormatInt(time.Now().UnixNano(), 16)
	}
	return hex.EncodeToString(b[:])
}

// auditPath is the configured audit log, or "" when there is none.
func auditPath(f *Factory) string {
	if f.AuditLog != "" {
		return f.AuditLog
	}
	if f.Getenv == nil {
		return ""
	}
	return f.Getenv("JOBTRIAGE_AUDIT_LOG")
}

// auditFileMode is the mode of a new audit log.
const auditFileMode = 0o640

// checkAuditLog refuses an audit log that cannot be appended to, before the
// command asks anything or changes anything.
func checkAuditLog(path string) error {
	if path == "" {
		return nil
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, auditFileMode)
	if err != nil {
		return &exitError{code: ExitUnreachable, err: fmt.Errorf("audit log: %w (nothing was changed)", err)}
	}
	defer fh.Close()
	lock := flock.New(path)
	if err := lock.Lock(); err != nil {
		return &exitError{code: ExitUnreachable, err: fmt.Errorf("audit log: cannot lock %s: %w (nothing was changed)", path, err)}
	}
	return lock.Unlock()
}

// audit appends one JSON line to the audit log, if one is configured. A
// destructive action that cannot be audited is reported, not hidden; an
// intent line that cannot be written stops the action before it starts.
func audit(f *Factory, e auditEntry) error {
	path := auditPath(f)
	if path == "" {
		return nil
	}
	e.SchemaVersion, e.Time = auditSchemaVersion, rfc3339(f.Now())
	if e.Run == "" {
		e.Run = auditRunID()
	}
	if e.Phase == "" {
		e.Phase = auditOutcome
	}
	if u, err := user.Current(); err == nil {
		e.User = u.Username
	}
	e.Host, _ = os.Hostname()
	if cfg, err := f.Config(); err == nil {
		e.Database = cfg.Target.Redacted()
	}
	if c, err := f.Context(); err == nil && c != nil {
		e.Context = c.Name
	}
	if f.Args != nil {
		// The command line as typed, flags included, secrets masked.
		e.Args = make([]string, len(f.Args))
		for i, a := range f.Args {
			e.Args[i] = redact.Text(a)
		}
	}
	if q, ok := e.Filter.(triage.Query); ok {
		e.Filter = auditFilterOf(q)
	}
	if e.Phase == auditIntent {
		e.IDs, e.spooled, e.Count = nil, nil, 0
	}
	if e.spooled.Len() > 0 && len(e.IDs) > 0 {
		// Ids the spool could not take (it failed mid-run) join the rest.
		_ = e.spooled.AddIDs(e.IDs)
		e.IDs = nil
	}
	err := appendAuditLine(path, e)
	if err == nil {
		return nil
	}
	// An audit log that cannot be written is exit 5, as the check before
	// any change says it is: a log on a full disk (or /dev/full) passes
	// that check and fails here.
	if e.Phase == auditIntent {
		return &exitError{code: ExitUnreachable, err: fmt.Errorf("%w (nothing was changed)", err)}
	}
	if len(e.IDs) == 0 && e.spooled.Len() == 0 {
		return &exitError{code: ExitUnreachable, err: err}
	}
	// The whole line did not fit (a full disk): record what was done
	// without the ids rather than nothing, and still report the failure.
	short := e
	short.IDs, short.spooled = nil, nil
	short.IDsOmitted = sanitize.FirstLine(err.Error())
	if serr := appendAuditLine(path, short); serr != nil {
		return &exitError{code: ExitUnreachable, err: err}
	}
	return &exitError{code: ExitUnreachable, err: fmt.Errorf("%w; the outcome line was written without its ids", err)}
}

// auditSchemaVersion is the version of the audit line (docs/json.md).
const auditSchemaVersion = 1

// auditFilter is the audit line's "filter" (docs/json.md): the selection in
// snake_case, times in RFC 3339 seconds, empty parts left out.
type auditFilter struct {
	Queues      []string `json:"queues,omitempty"`
	Connections []string `json:"connections,omitempty"`
	Class       string   `json:"class,omitempty"`
	Signature   string   `json:"signature,omitempty"`
	Search      string   `json:"search,omitempty"`
	Since       string   `json:"since,omitempty"`
	Until       string   `json:"until,omitempty"`
	MinID       int64    `json:"min_id,omitempty"`
	MaxID       int64    `json:"max_id,omitempty"`
	// Jobs are the jobs chosen one by one in the terminal UI.
	Jobs []string `json:"jobs,omitempty"`
}

func auditFilterOf(q triage.Query) *auditFilter {
	f := q.Filter
	af := &auditFilter{Queues: f.Queues, Connections: f.Connections, Class: q.Class, Signature: q.Signature,
		Search: redact.Text(f.Search), MinID: f.MinID, MaxID: f.MaxID}
	if !f.Since.IsZero() {
		af.Since = rfc3339(f.Since)
	}
	if !f.Until.IsZero() {
		af.Until = rfc3339(f.Until)
	}
	return af
}

// auditWriteBuffer is the write size of a long audit line.
const auditWriteBuffer = 1 << 20

// appendAuditLine appends e as one line. It holds the log's exclusive lock
// (every jobtriage takes it), so no other line can land inside this one; and
// a write that fails part-way (a full disk) is cut back to where the line
// began, so the log never holds a torn line.
func appendAuditLine(path string, e auditEntry) (err error) {
	head, err := json.Marshal(e)
	if err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, auditFileMode)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer fh.Close()
	lock := flock.New(path)
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer lock.Unlock() //nolint:errcheck // closing the lock's file releases it too
	start, err := fh.Seek(0, io.SeekEnd)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer func() {
		if err == nil {
			return
		}
		// A device (/dev/full) has no partial line to cut back.
		if st, serr := fh.Stat(); serr == nil && !st.Mode().IsRegular() {
			return
		}
		if terr := fh.Truncate(start); terr != nil {
			err = fmt.Errorf("%w (and the partial line could not be removed: %v)", err, terr)
		}
	}()
	if e.spooled.Len() == 0 {
		// One write of one line.
		if _, err := fh.Write(append(head, '\n')); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		return nil
	}
	w := bufio.NewWriterSize(fh, auditWriteBuffer)
	w.Write(head[:len(head)-1]) //nolint:errcheck // Flush reports it
	w.WriteString(`,"ids":[`)   //nolint:errcheck
	if err := e.spooled.writeArray(w, ""); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	w.WriteString("]}\n") //nolint:errcheck
	if err := w.Flush(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// onTarget names the app and store a write changes, for confirmations and
// summaries (" — app shop (production) · postgres://…/shop table failed_jobs"),
// so that an operator with several apps sees where the action lands.
// With a context, its mark comes first (" — context shop [PRODUCTION] · app …"),
// in its colour on a terminal.
func onTarget(svc *triage.Service) string {
	if svc == nil || (svc.Target == "" && svc.TargetMark == "") {
		return ""
	}
	parts := make([]string, 0, 2)
	if svc.TargetMark != "" {
		parts = append(parts, svc.TargetMark)
	}
	if svc.Target != "" {
		parts = append(parts, sanitize.Line(svc.Target))
	}
	return " — " + strings.Join(parts, " · ")
}

// targetText is onTarget's name of the target without the dash and the
// colour, for --json documents ("" when the service names none).
func targetText(svc *triage.Service) string {
	return sgrRE.ReplaceAllString(strings.TrimPrefix(onTarget(svc), " — "), "")
}

// sgrRE matches the colour sequences contextMark adds.
var sgrRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// printListingHeader names, on a terminal, what a listing shows and where
// it comes from, as a confirmation does ("Failed jobs — context shop
// [PRODUCTION] · app …"); piped output stays the bare rows.
func printListingHeader(ios *IOStreams, what string, svc *triage.Service) {
	if ios.IsStdoutTTY() && onTarget(svc) != "" {
		fmt.Fprintln(ios.Out, what+onTarget(svc))
	}
}

// ansiColor is the SGR code of a colour a context may have ("" for none):
// the colours in SGR order from red (31).
func ansiColor(name string) string {
	i := slices.Index([]string{"red", "green", "yellow", "blue", "magenta", "cyan"}, name)
	if i < 0 {
		return ""
	}
	return strconv.Itoa(31 + i)
}

// contextMark is a context's mark for prompts and summaries: plain text
// ("context shop (Shop EU) [PRODUCTION]"), bold in the context's colour when
// the output may carry colour. The marker text is the same either way, so
// NO_COLOR loses nothing.
func contextMark(ios *IOStreams, c contexts.Context) string {
	mark := sanitize.Line(c.Marker())
	code := ansiColor(c.DisplayColor())
	if code == "" || ios == nil || !ios.ColorEnabled() {
		return mark
	}
	return "\x1b[1;" + code + "m" + mark + "\x1b[0m"
}
