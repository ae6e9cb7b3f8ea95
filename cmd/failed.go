package cmd

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
	"github.com/jobtriage/jobtriage/tui"
)

// FilterFlags are the selection flags that failed, retry and forget share.
type FilterFlags struct {
	Queues      []string
	Connections []string
	Class       string
	Search      string
	Since       string
	Until       string
	Signature   string
	Tags        []string
}

func (ff *FilterFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Var(nameList{&ff.Queues}, "queue", "only these `queues` (repeat or comma-separate; write a comma inside a name as \\,)")
	fl.Var(nameList{&ff.Connections}, "connection", "only these queue `connections` (e.g. database, redis)")
	fl.StringVar(&ff.Class, "class", "", "only job classes containing `TEXT` (case-insensitive)")
	fl.StringVar(&ff.Search, "search", "", "only jobs whose exception or payload contains `TEXT`")
	timeVar(fl, &ff.Since, "since", "only failures at or after `WHEN`: a duration back (30m, 6h, 7d) or a time")
	timeVar(fl, &ff.Until, "until", "only failures at or before `WHEN`: a duration back or a time")
	fl.StringVar(&ff.Signature, "signature", "", "only jobs of the error signature `ID` shown by failed --group")
	fl.Var(nameList{&ff.Tags}, "tag", "only jobs carrying every one of these Horizon `tags`, exactly (repeat or comma-separate; write a comma inside a tag as \\,)")
}

// query turns the flags into a triage.Query, validating the times.
func (ff *FilterFlags) query(now time.Time, loc *time.Location) (triage.Query, error) {
	q := triage.Query{
		Filter: triage.Filter{
			Queues:      nonEmpty(ff.Queues),
			Connections: nonEmpty(ff.Connections),
			Search:      ff.Search,
		},
		Class:     strings.TrimSpace(ff.Class),
		Signature: strings.ToLower(strings.TrimSpace(ff.Signature)),
		Tags:      nonEmpty(ff.Tags),
	}
	if q.Signature != "" && !signatureIDRE.MatchString(q.Signature) {
		return q, FlagErrorf("--signature %q: want the 10 hex digits failed --group prints, like 0f494f9f16", sanitize.Line(ff.Signature))
	}
	var err error
	if q.Filter.Since, err = parseTimeBound(ff.Since, now, loc); err != nil {
		return q, FlagErrorf("--since: %v", err)
	}
	if q.Filter.Until, err = parseTimeBound(ff.Until, now, loc); err != nil {
		return q, FlagErrorf("--until: %v", err)
	}
	if !q.Filter.Since.IsZero() && !q.Filter.Until.IsZero() && q.Filter.Until.Before(q.Filter.Since) {
		return q, FlagErrorf("--until is before --since")
	}
	return q, nil
}

// queryNames are the names q selects by, for Service.CheckNames: one nothing
// has is an error for the commands that act (open), a warning for failed.
func queryNames(q triage.Query) triage.Names {
	return triage.Names{Queues: q.Filter.Queues, Connections: q.Filter.Connections, Class: q.Class}
}

// open opens the service and reads the flags into a query of names the store has (retry, forget).
func (ff *FilterFlags) open(ctx context.Context, service func(context.Context) (*triage.Service, error), now time.Time) (*triage.Service, triage.Query, error) {
	svc, err := service(ctx)
	if err != nil {
		return nil, triage.Query{}, err
	}
	q, err := ff.query(now, svc.Location)
	if err == nil {
		err = svc.CheckNames(ctx, queryNames(q))
	}
	return svc, q, err
}

// signatureIDRE is a signature id: the first 10 hex digits of its hash.
var signatureIDRE = regexp.MustCompile(`^[0-9a-f]{10}$`)

// errNoSuchSignature: --signature names an id no selected job has; a
// mistyped or stale id must not read as "nothing to do".
func (ff *FilterFlags) errNoSuchSignature() error {
	others := *ff
	others.Signature = ""
	scope := ""
	if !others.empty() {
		scope = " among the jobs the other filters select"
	}
	return &exitError{code: ExitNotFound, err: fmt.Errorf("%w: no failed job has signature %s%s (failed --group lists them)",
		triage.ErrNotFound, strings.ToLower(strings.TrimSpace(ff.Signature)), scope)}
}

func (ff *FilterFlags) empty() bool {
	return len(nonEmpty(ff.Queues)) == 0 && len(nonEmpty(ff.Connections)) == 0 && ff.Class == "" &&
		ff.Search == "" && ff.Since == "" && ff.Until == "" && ff.Signature == "" && len(ff.Tags) == 0
}

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// FailedOptions are the inputs of `jobtriage failed`.
type FailedOptions struct {
	IO      *IOStreams
	Service func(context.Context) (*triage.Service, error)
	Now     func() time.Time

	Filter FilterFlags
	Limit  int
	// LimitSet: --limit was given; --ndjson exports everything without it.
	LimitSet bool
	After    string
	Group    bool
	// NewSince, Window and Sort are --group's: only signatures first seen
	// at or after NewSince; the trend window; the order.
	NewSince string
	Window   string
	Sort     string
	window   time.Duration  // Window parsed
	sortKey  triage.SortKey // Sort parsed
	JSON     bool
	NDJSON   bool
	Full     bool
	CSV      bool
}

// NewCmdFailed builds `jobtriage failed`.
func NewCmdFailed(f *Factory, runF func(context.Context, *FailedOptions) error) *cobra.Command {
	opts := &FailedOptions{IO: f.IO, Now: f.Now}
	cmd := &cobra.Command{
		Use:   "failed",
		Short: "List failed jobs, newest first, or group them by error signature",
		Long: heredoc.Doc(`
			List the rows of failed_jobs, newest first: id, connection, queue, job class,
			the top exception (the one that was thrown, after any "Next" chain) and when
			it failed. Pages are keyset pages: the command prints the --after cursor of
			the next page on stderr.

			--group folds every matching failure into error signatures: job class + top
			exception class + message with ids, numbers, uuids, emails, paths and quoted
			values normalised away. The signature id works with --signature here and in
			retry and forget. Each signature has a trend: its failures in the last
			--window against the window before (a change, and on a terminal a sparkline
			over both windows); signatures first seen within the last window are marked
			new. --new-since keeps only the signatures first seen at or after a time (the
			deploy) or a duration back; --sort orders by count, last, first or trend.
		`),
		Example: examples(heredoc.Doc(`
			  $ jobtriage failed
			  $ jobtriage failed --queue emails --since 2h
			  $ jobtriage failed --group
			  $ jobtriage failed --group --new-since "2026-11-30 14:05" --sort trend
			  $ jobtriage failed --signature 3fa9c2d1e0 --json
			  $ jobtriage failed --ndjson --full > failed_jobs.ndjson
			  $ jobtriage failed --signature 3fa9c2d1e0 --csv > incident.csv
		`)),
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Service = f.Service
			opts.LimitSet = c.Flags().Changed("limit")
			switch with := csvConflict(opts); {
			case opts.CSV && with != "":
				return FlagErrorf("--csv is an export of the listing: it takes none of %s", with)
			case opts.JSON && opts.NDJSON:
				return FlagErrorf("--json and --ndjson are alternatives: pick one")
			case opts.Group && (opts.NDJSON || opts.After != ""):
				return FlagErrorf("--group takes neither --ndjson nor --after")
			}
			for _, name := range []string{"new-since", "window", "sort"} {
				if c.Flags().Changed(name) && !opts.Group {
					return FlagErrorf("--%s goes with --group", name)
				}
			}
			if opts.NewSince != "" && opts.Filter.Since != "" {
				// --since would hide a signature's older failures: it would look new.
				return FlagErrorf("--new-since judges a signature by every failure it has; it does not combine with --since")
			}
			var err error
			if opts.window, err = parseTrendWindow("--window", opts.Window); err != nil {
				return err
			}
			if opts.sortKey, err = triage.ParseSortKey(opts.Sort); err != nil {
				return FlagErrorf("--sort %q: want count, last, first or trend", sanitize.Line(opts.Sort))
			}
			if opts.Full && !(opts.JSON || opts.NDJSON) {
				return FlagErrorf("--full goes with --json or --ndjson")
			}
			if _, err := triage.ParseCursor(opts.After); opts.After != "" && err != nil {
				return FlagErrorf("--after: %v", err)
			}
			return runOr(c.Context(), opts, runF, failedRun)
		},
	}
	opts.Filter.register(cmd)
	fl := cmd.Flags()
	countVarP(fl, &opts.Limit, "limit", "L", 30, 0, "jobs per page (group: signatures shown; --ndjson: all unless given; 0 = all)")
	fl.StringVar(&opts.After, "after", "", "continue after this `cursor` (printed by the previous page)")
	fl.BoolVar(&opts.Group, "group", false, "one row per error signature, by count")
	timeVar(fl, &opts.NewSince, "new-since", "with --group: only signatures first seen at or after `WHEN` (a duration back or a time, e.g. the deploy)")
	trendWindowVar(fl, &opts.Window, "window", "1h", "with --group: the trend window; the last one is compared with the one before (30m, 6h, 1d; at most 30d)")
	fl.StringVar(&opts.Sort, "sort", "count", "with --group: order by `KEY`: count, last (seen), first (seen) or trend (rise since the window before)")
	fl.BoolVar(&opts.JSON, "json", false, "print a JSON array")
	fl.BoolVar(&opts.NDJSON, "ndjson", false, "stream every matching job as one JSON object per line (whole-table export)")
	fl.BoolVar(&opts.Full, "full", false, "include the whole payload and exception in JSON output")
	fl.BoolVar(&opts.CSV, "csv", false, "export every matching job as RFC 4180 CSV, the listing's columns (--limit N: the newest N)")
	return cmd
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return FlagErrorf("%s takes no arguments, got %q", cmd.CommandPath(), args[0])
	}
	return nil
}

func failedRun(ctx context.Context, opts *FailedOptions) error {
	svc, err := opts.Service(ctx)
	if err != nil {
		return err
	}
	now := opts.Now()
	q, err := opts.Filter.query(now, svc.Location)
	if err != nil {
		return err
	}
	if opts.After == "" {
		// A name nothing has still succeeds (nothing found), but says so with the names there are.
		var unknown *triage.UnknownNameError
		if err := svc.CheckNames(ctx, queryNames(q)); errors.As(err, &unknown) {
			fmt.Fprintln(opts.IO.ErrOut, "warning: "+sanitize.Line(unknown.Sentence()))
		} else if err != nil {
			return err
		}
	}
	if !opts.JSON && !opts.NDJSON && !opts.CSV {
		what := "Failed jobs"
		if opts.Group {
			what = "Failed jobs by error signature"
		}
		printListingHeader(opts.IO, what, svc)
	}
	switch {
	case opts.Group:
		return groupRun(ctx, opts, svc, q, now)
	case opts.NDJSON:
		return exportRun(ctx, opts, svc, q)
	case opts.CSV:
		return csvRun(ctx, opts, svc, q)
	case opts.Limit == 0 && opts.After == "" && (opts.JSON || !opts.IO.IsStdoutTTY()):
		return streamAllRun(ctx, opts, svc, q, now)
	}
	page, err := svc.List(ctx, triage.ListParams{Query: q, Cursor: opts.After, Limit: opts.Limit})
	if err != nil {
		return err
	}
	if opts.Limit == 0 {
		// --limit 0 means everything: keep paging.
		for page.Next != "" {
			next, err := svc.List(ctx, triage.ListParams{Query: q, Cursor: page.Next, Limit: 1000})
			if err != nil {
				return err
			}
			page.Jobs = append(page.Jobs, next.Jobs...)
			page.Next = next.Next
		}
	}
	if opts.JSON {
		if err := writeJobsJSON(ctx, opts, svc, page.Jobs, page.Next); err != nil {
			return err
		}
	} else if err := printJobs(opts.IO, page.Jobs, now); err != nil {
		return err
	}
	if page.Next != "" {
		fmt.Fprintf(opts.IO.ErrOut, "next page: --after %s\n", page.Next)
	}
	if len(page.Jobs) == 0 && q.Signature != "" && opts.After == "" {
		return opts.Filter.errNoSuchSignature()
	}
	return nil
}

func printJobs(io *IOStreams, jobs []triage.Job, now time.Time) error {
	if len(jobs) == 0 {
		if io.IsStdoutTTY() {
			fmt.Fprintln(io.ErrOut, "No failed jobs match.")
		}
		return nil
	}
	if !io.IsStdoutTTY() {
		t := newTable(io, -1, "ID", "CONNECTION", "QUEUE", "CLASS", "EXCEPTION", "MESSAGE", "FAILED")
		for _, j := range jobs {
			t.add(j.ID, j.Connection, j.Queue, j.Class, j.ExceptionClass, j.ExceptionMessage, timeCell(io, j.FailedAt, now))
		}
		return t.render()
	}
	// On a terminal: where and what, the error beneath; a narrow one moves the class there.
	wide := io.TerminalWidth() >= 120
	header := []string{"ID", "FAILED", "QUEUE"}
	if wide {
		header = append(header, "CLASS")
	}
	t := newTable(io, len(header)-1, header...)
	t.style(0, "245")
	t.style(2, "110")
	for _, j := range jobs {
		errLine := shortClass(j.ExceptionClass) + ": " + j.ExceptionMessage
		if wide {
			t.add(j.ID, timeCell(io, j.FailedAt, now), j.Connection+"/"+j.Queue, j.Class)
		} else {
			t.add(j.ID, timeCell(io, j.FailedAt, now), j.Connection+"/"+j.Queue)
			errLine = j.Class + " · " + errLine
		}
		t.sub(errLine)
	}
	return t.render()
}

// shortClass drops a long namespace on a terminal (show and JSON keep it).
func shortClass(c string) string {
	if i := strings.LastIndex(c, `\`); i >= 0 && len(c) > 30 {
		return c[i+1:]
	}
	return c
}

// jobDocOf is a job's document, with --full its whole payload and exception.
func jobDocOf(opts *FailedOptions, j triage.Job, r *triage.FailedRow) jobDoc {
	if opts.Full && r != nil {
		return fullJobDoc(j, r)
	}
	return newJobDoc(j)
}

// writeJobsJSON prints one page as a failedDoc; next is the next page's cursor.
func writeJobsJSON(ctx context.Context, opts *FailedOptions, svc *triage.Service, jobs []triage.Job, next string) error {
	doc := failedDoc{SchemaVersion: jsonSchemaVersion, Target: targetText(svc), Jobs: make([]jobDoc, 0, len(jobs)), Next: nullIfZero(next)}
	for _, j := range jobs {
		var r *triage.FailedRow
		if opts.Full {
			var err error
			if r, err = svc.GetFailed(ctx, triage.Ref{ID: j.RowID}); err != nil {
				return err
			}
		}
		doc.Jobs = append(doc.Jobs, jobDocOf(opts, j, r))
	}
	return writeJSON(opts.IO.Out, doc)
}

// streamAllRun prints every matching job (--limit 0) as it is read, in
// constant memory: a JSON array written element by element, or TSV lines.
func streamAllRun(ctx context.Context, opts *FailedOptions, svc *triage.Service, q triage.Query, now time.Time) error {
	w := opts.IO.Out
	first, n := true, 0
	if opts.JSON {
		// A failedDoc written member by member: the jobs as they are read.
		target, err := marshalJSON(targetText(svc), "")
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "{\n  \"schema_version\": %d,\n  \"target\": %s,\n  \"jobs\": [", jsonSchemaVersion, bytes.TrimSpace(target)); err != nil {
			return err
		}
	}
	err := svc.Each(ctx, q, opts.Full, func(j triage.Job, r *triage.FailedRow) error {
		n++
		if !opts.JSON {
			cells := []string{j.ID, j.Connection, j.Queue, j.Class, j.ExceptionClass, j.ExceptionMessage, timeCell(opts.IO, j.FailedAt, now)}
			for i := range cells {
				cells[i] = sanitize.Line(cells[i])
			}
			_, err := io.WriteString(w, strings.Join(cells, "\t")+"\n")
			return err
		}
		b, err := marshalJSON(jobDocOf(opts, j, r), "")
		if err != nil {
			return err
		}
		sep := ",\n    "
		if first {
			sep, first = "\n    ", false
		}
		_, err = io.WriteString(w, sep+strings.TrimSuffix(string(b), "\n"))
		return err
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		end := "\n  ],\n  \"next\": null\n}\n"
		if first {
			end = "],\n  \"next\": null\n}\n"
		}
		if _, err = io.WriteString(w, end); err != nil {
			return err
		}
	}
	if n == 0 && q.Signature != "" {
		return opts.Filter.errNoSuchSignature()
	}
	return nil
}

// errExportDone stops an export at its --limit.
var errExportDone = errors.New("export limit reached")

// exportRun streams every match as NDJSON, newest first; an explicit --limit N, the first N.
func exportRun(ctx context.Context, opts *FailedOptions, svc *triage.Service, q triage.Query) error {
	n := 0
	err := svc.Each(ctx, q, opts.Full, func(j triage.Job, r *triage.FailedRow) error {
		if opts.exportLimitReached(n) {
			return errExportDone
		}
		n++
		doc := jobDocOf(opts, j, r)
		doc.SchemaVersion = jsonSchemaVersion // each record stands alone
		return writeJSONLine(opts.IO.Out, doc)
	})
	return exportDone(opts, q, n, err)
}

// exportLimitReached: only an explicit --limit N (not 0) bounds an export.
func (o *FailedOptions) exportLimitReached(n int) bool {
	return o.LimitSet && o.Limit > 0 && n >= o.Limit
}

// exportDone ends an export (NDJSON or CSV) of n records: err is what the
// walk returned, errExportDone when it stopped at --limit.
func exportDone(opts *FailedOptions, q triage.Query, n int, err error) error {
	if err != nil && !errors.Is(err, errExportDone) {
		return err
	}
	if n == 0 && q.Signature != "" {
		return opts.Filter.errNoSuchSignature()
	}
	if opts.IO.IsStderrTTY() {
		fmt.Fprintf(opts.IO.ErrOut, "exported %s\n", countNoun(n, "failed job"))
	}
	return nil
}

// parseTrendWindow reads a trend window flag (trendWindowOf).
func parseTrendWindow(flag, s string) (time.Duration, error) {
	d, err := trendWindowOf(s)
	if err != nil {
		return 0, FlagErrorf("%s %q: %v", flag, sanitize.Line(s), err)
	}
	return d, nil
}

// groupProgressEvery is how many rows group reads between two "scanned" lines.
const groupProgressEvery = 5000

func groupRun(ctx context.Context, opts *FailedOptions, svc *triage.Service, q triage.Query, now time.Time) error {
	window, sortKey := opts.window, opts.sortKey
	p := triage.GroupParams{Query: q, Window: window, Sort: sortKey}
	if opts.NewSince != "" {
		var err error
		if p.NewSince, err = parseTimeBound(opts.NewSince, now, svc.Location); err != nil {
			return FlagErrorf("--new-since: %v", err)
		}
		p.OnlyNew = true
	}
	newSince := cmp.Or(p.NewSince, now.Add(-window))
	if opts.IO.IsStderrTTY() && !opts.JSON {
		p.ProgressEvery = groupProgressEvery
	}
	var sigs []triage.Signature
	for g, err := range svc.GroupSnapshots(ctx, p) {
		switch {
		case err != nil:
			return err
		case !g.Done:
			fmt.Fprintf(opts.IO.ErrOut, "\rscanned %s (%d%%)…", countNoun(g.Scanned, "failed job"), int(g.Fraction*100))
		case p.ProgressEvery > 0 && g.Scanned >= p.ProgressEvery:
			fmt.Fprint(opts.IO.ErrOut, "\r\033[K") // a snapshot was shown
		}
		sigs = g.Signatures
	}
	total, distinct := 0, len(sigs)
	for _, s := range sigs {
		total += s.Count
	}
	if opts.Limit > 0 && len(sigs) > opts.Limit {
		if !opts.JSON {
			defer fmt.Fprintf(opts.IO.ErrOut, "%s more not shown (--limit 0 shows all)\n", countNoun(len(sigs)-opts.Limit, "signature"))
		}
		sigs = sigs[:opts.Limit]
	}
	noSuchSignature := distinct == 0 && q.Signature != ""
	if opts.JSON {
		doc := groupDoc{SchemaVersion: jsonSchemaVersion, Target: targetText(svc), Signatures: make([]signatureDoc, 0, len(sigs)),
			TotalJobs: total, TotalSignatures: distinct, Sort: sortKey.String(), WindowSeconds: int64(window / time.Second),
			NewSince: jsonTime(newSince), OnlyNew: p.OnlyNew}
		for _, sg := range sigs {
			doc.Signatures = append(doc.Signatures, newSignatureDoc(sg))
		}
		if err := writeJSON(opts.IO.Out, doc); err != nil || !noSuchSignature {
			return err
		}
	}
	if noSuchSignature {
		return opts.Filter.errNoSuchSignature()
	}
	if len(sigs) == 0 {
		if opts.IO.IsStdoutTTY() {
			if p.OnlyNew {
				fmt.Fprintf(opts.IO.ErrOut, "No signature first seen since %s matches.\n", newSince.Format(time.RFC3339))
			} else {
				fmt.Fprintln(opts.IO.ErrOut, "No failed jobs match.")
			}
		}
		return nil
	}
	if !opts.IO.IsStdoutTTY() {
		// Piped: the trend's numbers follow the existing columns, so that
		// scripts reading the first seven keep working.
		t := newTable(opts.IO, -1, "SIGNATURE", "COUNT", "LAST", "FIRST", "QUEUES", "CLASS", "ERROR",
			"RECENT", "PREVIOUS", "CHANGE", "NEW")
		for _, s := range sigs {
			t.add(s.ID, strconv.Itoa(s.Count), timeCell(opts.IO, s.LastSeen, now), timeCell(opts.IO, s.FirstSeen, now),
				strings.Join(s.Queues, ","), s.Class, s.ExceptionClass+": "+s.Message,
				strconv.Itoa(s.Recent), strconv.Itoa(s.Previous), strconv.Itoa(s.Change()), strconv.FormatBool(s.New))
		}
		return t.render()
	}
	// On a terminal the error gets its own line; a narrow one moves the class there too.
	wide := opts.IO.TerminalWidth() >= 120
	header := []string{"SIGNATURE", "COUNT", "TREND " + alerts.FormatDuration(window), "LAST", "FIRST", "QUEUES"}
	if wide {
		header = append(header, "CLASS")
	}
	t := newTable(opts.IO, len(header)-1, header...)
	t.style(0, "245")
	t.style(1, "214")
	t.style(2, "110")
	for _, s := range sigs {
		cells := []string{s.ID, strconv.Itoa(s.Count), trendCell(s), timeCell(opts.IO, s.LastSeen, now), timeCell(opts.IO, s.FirstSeen, now),
			strings.Join(s.Queues, ",")}
		errLine := shortClass(s.ExceptionClass) + ": " + s.Message
		if wide {
			cells = append(cells, s.Class)
		} else {
			errLine = s.Class + " · " + errLine
		}
		t.add(cells...)
		t.sub(errLine)
	}
	if err := t.render(); err != nil {
		return err
	}
	kind := "signature"
	if p.OnlyNew {
		kind = "new signature"
	}
	fmt.Fprintf(opts.IO.ErrOut, "%s in %s; trend: the last %s against the %s before\n", countNoun(total, "failed job"),
		countNoun(distinct, kind), alerts.FormatDuration(window), alerts.FormatDuration(window))
	return nil
}

// trendCell is a signature's trend on a terminal: a sparkline over the two
// windows, the change, and "new" when first seen since --new-since.
func trendCell(s triage.Signature) string {
	cell := tui.Sparkline(s.Spark) + " " + tui.Change(s.Change())
	if s.New {
		cell += " new"
	}
	return cell
}
