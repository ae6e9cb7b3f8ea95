package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/gofrs/flock"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

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
	line, err := bufio.NewReader(io.In).ReadString('\n')
	if err != nil && line == "" {
		return ErrCancelled
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return ErrCancelled
}

// progress prints a running count on stderr when it is a terminal, and
// nothing for cron.
type progress struct {
	io    *IOStreams
	verb  string
	last  time.Time
	shown bool
}

func newProgress(io *IOStreams, verb string) *progress { return &progress{io: io, verb: verb} }

func (p *progress) update(n int64) {
	if p == nil || !p.io.IsStderrTTY() || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.shown = true
	fmt.Fprintf(p.io.ErrOut, "\r%s %s…", p.verb, humanize.Comma(n))
}

func (p *progress) done() {
	if p != nil && p.shown {
		fmt.Fprint(p.io.ErrOut, "\r\033[K")
	}
}

// auditEntry is one line of the audit log: who did what to which jobs.
type auditEntry struct {
	Time     time.Time `json:"time"`
	User     string    `json:"user"`
	Host     string    `json:"host"`
	Command  string    `json:"command"`
	Args     []string  `json:"args"`
	Database string    `json:"database"`
	Filter   any       `json:"filter,omitempty"`
	Count    int64     `json:"count"`
	IDs      []string  `json:"ids,omitempty"`
	Skipped  int       `json:"skipped,omitempty"`
	// spooled are the ids of a bulk action, written as "ids" from the
	// temporary file they were kept in.
	spooled *spool
}

// audit appends one JSON line to the audit log, if one is configured. A
// destructive action that cannot be audited is reported, not hidden.
func audit(f *Factory, e auditEntry) error {
	path := f.AuditLog
	if path == "" {
		path = f.Getenv("JOBTRIAGE_AUDIT_LOG")
	}
	if path == "" {
		return nil
	}
	e.Time = f.Now().UTC()
	if u, err := user.Current(); err == nil {
		e.User = u.Username
	}
	e.Host, _ = os.Hostname()
	if cfg, err := f.Config(); err == nil {
		e.Database = cfg.Target.Redacted()
	}
	if e.spooled.Len() > 0 && len(e.IDs) > 0 {
		// Ids the spool could not take (it failed mid-run) join the rest.
		_ = e.spooled.AddIDs(e.IDs)
		e.IDs = nil
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o640)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer fh.Close()
	if e.spooled.Len() == 0 {
		// One write of one line: O_APPEND keeps it whole beside other writers.
		if _, err := fh.Write(append(line, '\n')); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		return nil
	}
	// A line too long for one write: hold the log's lock while writing it,
	// so that another jobtriage's line cannot land inside it.
	lock := flock.New(path)
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer lock.Unlock() //nolint:errcheck // closing the lock's file releases it too
	w := bufio.NewWriterSize(fh, 1<<20)
	w.Write(line[:len(line)-1]) //nolint:errcheck // Flush reports it
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
func onTarget(svc *triage.Service) string {
	if svc == nil || svc.Target == "" {
		return ""
	}
	return " — " + sanitize.Line(svc.Target)
}
