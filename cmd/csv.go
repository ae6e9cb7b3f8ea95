package cmd

import (
	"cmp"
	"context"
	"encoding/csv"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// csvHeader names failed --csv's columns: the listing's, failed_at in RFC 3339.
var csvHeader = []string{"id", "connection", "queue", "class", "exception", "message", "failed_at"}

// csvCell makes database text one CSV field. Line breaks, tabs, quotes and
// commas stay (RFC 4180 quoting carries them); what a terminal would act on
// becomes a visible escape, as in the listing, since CSV is cat'ed as often as
// opened. A field a spreadsheet would run as a formula (=, +, -, @ first:
// OWASP's advice) gets a leading apostrophe, unless it is a number.
func csvCell(s string) string {
	s = sanitize.Text(s)
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@':
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return "'" + s
		}
	}
	return s
}

// csvRun writes every match (--limit N: the newest N) as CSV, newest first, in constant memory.
func csvRun(ctx context.Context, opts *FailedOptions, svc *triage.Service, q triage.Query) error {
	w := csv.NewWriter(opts.IO.Out)
	w.UseCRLF = true // RFC 4180 ends records with CRLF
	if err := w.Write(csvHeader); err != nil {
		return err
	}
	n := 0
	err := svc.Each(ctx, q, false, func(j triage.Job, _ *triage.FailedRow) error {
		if opts.exportLimitReached(n) {
			return errExportDone
		}
		n++
		at := ""
		if !j.FailedAt.IsZero() {
			at = j.FailedAt.Format(time.RFC3339)
		}
		rec := []string{j.ID, j.Connection, j.Queue, j.Class, j.ExceptionClass, j.ExceptionMessage, at}
		for i := range rec {
			rec[i] = csvCell(rec[i])
		}
		if err := w.Write(rec); err != nil {
			return err
		}
		if n%csvFlushRows == 0 {
			w.Flush()
			return w.Error()
		}
		return nil
	})
	w.Flush()
	return exportDone(opts, q, n, cmp.Or(err, w.Error()))
}

// csvFlushRows records are buffered at most, so a pipe sees an export go.
const csvFlushRows = 500

// csvConflict names the flags given with --csv that it cannot go with.
func csvConflict(opts *FailedOptions) string {
	var with []string
	for _, f := range []struct {
		on   bool
		name string
	}{{opts.JSON, "--json"}, {opts.NDJSON, "--ndjson"}, {opts.Group, "--group"}, {opts.After != "", "--after"}, {opts.Full, "--full"}} {
		if f.on {
			with = append(with, f.name)
		}
	}
	return strings.Join(with, ", ")
}
