package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/alerts/metrics"
	"github.com/jobtriage/jobtriage/internal/buildinfo"
	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// defaultMonitorParallel is how many contexts monitor checks at once: enough
// to hide a few apps' round trips, too few to dial every database of a list.
const defaultMonitorParallel = 4

// multiContext: the run covers several contexts (--all-contexts, --contexts).
func (o *MonitorOptions) multiContext() bool { return o.AllContexts || len(o.Contexts) > 0 }

// bindMonitorContexts gives the options the contexts, a way to bind a copy to
// one, and the flags and environment that would override every context's database.
func bindMonitorContexts(f *Factory, c *cobra.Command, o *MonitorOptions) {
	o.multiFlags = nil
	for _, name := range []string{"dsn", "jobs-dsn", "env", "context"} {
		if fl := c.Flags().Lookup(name); fl != nil && fl.Changed {
			o.multiFlags = append(o.multiFlags, "--"+name)
		}
	}
	for _, env := range []string{"JOBTRIAGE_DSN", "JOBTRIAGE_JOBS_DSN"} {
		if f.Getenv(env) != "" {
			o.multiFlags = append(o.multiFlags, env)
		}
	}
	o.contextList = func() ([]contexts.Context, error) {
		file, err := f.ConfigFileData()
		if err != nil {
			return nil, err
		}
		if o.AllContexts {
			if len(file.Contexts) == 0 {
				where, _ := contexts.Locate(f.ConfigFile, f.Getenv)
				return nil, fmt.Errorf("%w: --all-contexts: no contexts in %s", errConfig, orNone(where))
			}
			return file.Contexts, nil
		}
		var out []contexts.Context
		seen := map[string]bool{}
		for _, name := range o.Contexts {
			c, ok := file.Context(name)
			if !ok {
				return nil, FlagErrorf("--contexts: no context %q in %s (have: %s)", name, orNone(file.Path), contextNames(file))
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, c)
			}
		}
		return out, nil
	}
	o.forContext = func(c contexts.Context, out, errOut io.Writer) *MonitorOptions {
		ios := *o.IO
		ios.Out, ios.ErrOut, ios.In = out, errOut, strings.NewReader("")
		child := f.ForContext(c, &ios)
		cp := *o
		cp.IO, cp.Service, cp.Config, cp.EnvFile, cp.Context = &ios, child.Service, child.Config, "", &c
		cp.AllContexts, cp.Contexts = false, nil
		return &cp
	}
}

// validateContexts checks --listen and the flags of a run over several contexts.
func (o *MonitorOptions) validateContexts() error {
	if o.Listen != "" && !o.Watch { // its HOST:PORT is checked by addressVar
		return FlagErrorf("--listen serves the watcher's metrics: add --watch")
	}
	if !o.multiContext() {
		return nil
	}
	switch {
	case o.AllContexts && len(o.Contexts) > 0:
		return FlagErrorf("--all-contexts and --contexts are alternatives: pick one")
	case len(o.multiFlags) > 0:
		return FlagErrorf("%s would replace the database of every context: drop it, or check one app with --context", strings.Join(o.multiFlags, ", "))
	case o.Format == "prometheus":
		return FlagErrorf("--format prometheus covers one app; over several contexts use --watch --listen (one /metrics with a context label)")
	case o.Parallel < 1:
		return FlagErrorf("--parallel must be at least 1")
	}
	return nil
}

// contextCheck is one context's part of a run over several.
type contextCheck struct {
	ctx         contexts.Context
	opts        *MonitorOptions
	out, errOut *bytes.Buffer
	rep         triage.Report
	breaches    []triage.Breach
	err         error
	code        ExitCode
	target      string
}

// monitorContextsRun checks the contexts, --parallel at once, then prints one
// report (a section, a CONTEXT column when piped, or an object per context),
// the breaches and errors on stderr under the context's name; the worst exits.
func monitorContextsRun(ctx context.Context, opts *MonitorOptions) error {
	list, err := opts.contextList()
	if err != nil {
		return err
	}
	if opts.Watch {
		return watchContextsRun(ctx, opts, list)
	}
	// An options copy per context, with buffered streams: parallel checks never mix.
	checks := make([]*contextCheck, len(list))
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for i, c := range list {
		out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
		ch := &contextCheck{ctx: c, out: out, errOut: errOut, opts: opts.forContext(c, out, errOut)}
		checks[i] = ch
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ch.run(ctx)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	worst := ExitOK
	for _, ch := range checks {
		worst = worstExit(worst, ch.code)
	}
	if err := printContextsReport(opts, checks, worst); err != nil {
		return err
	}
	for _, ch := range checks {
		prefix := sanitize.Line(ch.ctx.Name) + ": "
		for _, line := range strings.Split(strings.TrimRight(ch.errOut.String(), "\n"), "\n") {
			if line != "" {
				fmt.Fprintln(opts.IO.ErrOut, prefix+line)
			}
		}
		for _, b := range ch.breaches {
			fmt.Fprintln(opts.IO.ErrOut, prefix+"unhealthy: "+sanitize.Line(b.String()))
		}
		if ch.err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "%serror (exit %d): %s\n", prefix, ch.code, sanitize.Line(sanitize.FirstLine(ch.err.Error())))
		}
	}
	if worst == ExitOK {
		return nil
	}
	return silentExit(worst)
}

// run checks one context into its own buffers.
func (ch *contextCheck) run(ctx context.Context) {
	if cfg, err := ch.opts.Config(); err == nil {
		ch.target = describeTarget(cfg)
	}
	src, p, err := monitorSetup(ctx, ch.opts)
	if err == nil {
		ch.rep, ch.breaches, err = monitorCheck(ctx, ch.opts, src, p)
	}
	ch.err, ch.code = err, exitCodeFor(err)
	if err == nil && len(ch.breaches) > 0 {
		ch.code = ExitUnhealthy
	}
	if err == nil && !ch.opts.JSON {
		if perr := printReport(ch.opts.IO, ch.rep); perr != nil {
			ch.err, ch.code = perr, ExitError
		}
	}
}

// contextsReportDoc is monitor --all-contexts --json.
type contextsReportDoc struct {
	SchemaVersion int                 `json:"schema_version"`
	Healthy       bool                `json:"healthy"`
	ExitCode      int                 `json:"exit_code"`
	Contexts      []contextMonitorDoc `json:"contexts"`
}

// contextMonitorDoc is one context's check: monitor --json's report, or null and the error.
type contextMonitorDoc struct {
	Context    string         `json:"context"`
	Label      *string        `json:"label"`
	Production bool           `json:"production"`
	Target     *string        `json:"target"`
	ExitCode   int            `json:"exit_code"`
	Error      *string        `json:"error"`
	Report     *reportJSONOut `json:"report"`
}

func printContextsReport(opts *MonitorOptions, checks []*contextCheck, worst ExitCode) error {
	ios := opts.IO
	if opts.JSON {
		doc := contextsReportDoc{SchemaVersion: monitorSchemaVersion, Healthy: worst == ExitOK, ExitCode: int(worst),
			Contexts: []contextMonitorDoc{}}
		for _, ch := range checks {
			d := contextMonitorDoc{Context: ch.ctx.Name, Label: nullIfZero(ch.ctx.Label), Production: ch.ctx.Production,
				Target: nullIfZero(ch.target), ExitCode: int(ch.code)}
			if ch.err != nil {
				d.Error = nullIfZero(sanitize.FirstLine(ch.err.Error()))
			} else {
				d.Report = new(reportJSON(ch.rep, ch.breaches))
			}
			doc.Contexts = append(doc.Contexts, d)
		}
		return writeJSON(ios.Out, doc)
	}
	var b strings.Builder
	for i, ch := range checks {
		if !ios.IsStdoutTTY() {
			// One TSV table: the context is the first column.
			for _, line := range strings.Split(strings.TrimRight(ch.out.String(), "\n"), "\n") {
				if line != "" {
					b.WriteString(sanitize.Line(ch.ctx.Name) + "\t" + line + "\n")
				}
			}
			continue
		}
		if i > 0 {
			b.WriteString("\n")
		}
		head := contextMark(ios, ch.ctx)
		if ch.target != "" {
			head += " · " + sanitize.Line(ch.target)
		}
		status := "healthy"
		switch {
		case ch.err != nil:
			status = fmt.Sprintf("error (exit %d)", ch.code)
		case len(ch.breaches) > 0:
			status = fmt.Sprintf("unhealthy (%d %s)", len(ch.breaches), alerts.Plural(len(ch.breaches), "breach", "breaches"))
		}
		b.WriteString(head + ": " + status + "\n")
		b.WriteString(ch.out.String())
	}
	_, err := io.WriteString(ios.Out, b.String())
	return err
}

// contextName is the context label of the metrics ("" for none).
func (o *MonitorOptions) contextName() string {
	if o.Context == nil {
		return ""
	}
	return o.Context.Name
}

// newExporter is --listen's exporter: blind after --blind-after, with a context label if asked.
func newExporter(opts *MonitorOptions, contexts bool) *metrics.Exporter {
	return metrics.New(metrics.Options{Build: metricsBuild(), Contexts: contexts, Stale: opts.BlindAfter, Now: opts.Now})
}

// metricsBuild is what jobtriage_build_info says of this binary.
func metricsBuild() metrics.Build {
	bi := buildinfo.Read()
	return metrics.Build{Version: bi.Version, Commit: bi.Commit, GoVersion: bi.GoVersion}
}

// serveMetrics serves the exporter on --listen until stop, which lets a scrape
// finish within watchFlushTimeout; a port not bound fails before anything starts.
func serveMetrics(ctx context.Context, opts *MonitorOptions, exp *metrics.Exporter) (stop func(), err error) {
	addr, stop, err := exp.Serve(ctx, opts.Listen, watchFlushTimeout)
	if err != nil {
		return nil, fmt.Errorf("--listen: %w", err)
	}
	fmt.Fprintf(opts.IO.ErrOut, "watch: serving http://%s%s and %s\n", addr, metrics.PathMetrics, metrics.PathHealth)
	if opts.Listening != nil {
		opts.Listening(addr)
	}
	return stop, nil
}

// prefixWriter writes whole lines to w after prefix, under a lock the watchers share: lines never mix.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	i := bytes.LastIndexByte(p.buf, '\n')
	if i < 0 {
		return len(b), nil
	}
	var out []byte
	for _, line := range bytes.SplitAfter(p.buf[:i+1], []byte("\n")) {
		if len(line) > 0 {
			out = append(append(out, p.prefix...), line...)
		}
	}
	p.buf = append(p.buf[:0], p.buf[i+1:]...)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// watchContextsRun runs a watcher per context (own lock, state file and
// notifiers), lines prefixed with its name ("context" in JSON), one metrics
// endpoint with a context label. A context that cannot open is reported
// (blind on /healthz) and left out; the others run until ctx ends (exit 0).
// When every context failed, the exit code is the worst of theirs.
func watchContextsRun(ctx context.Context, opts *MonitorOptions, list []contexts.Context) error {
	var exp *metrics.Exporter
	if opts.Listen != "" {
		exp = newExporter(opts, true)
		for _, c := range list {
			exp.Register(c.Name) // a context that never opens is blind
		}
		stop, err := serveMetrics(ctx, opts, exp)
		if err != nil {
			return err
		}
		defer stop()
	}
	var outMu, errMu sync.Mutex
	codes := make([]ExitCode, len(list))
	var wg sync.WaitGroup
	for i, c := range list {
		prefix := ""
		if !opts.JSON {
			prefix = "[" + sanitize.Line(c.Name) + "] "
		}
		co := opts.forContext(c, &prefixWriter{mu: &outMu, w: opts.IO.Out, prefix: prefix},
			&prefixWriter{mu: &errMu, w: opts.IO.ErrOut, prefix: "[" + sanitize.Line(c.Name) + "] "})
		co.metrics, co.Listen, co.Listening, co.multiName = exp, "", nil, c.Name
		wg.Go(func() {
			src, p, err := monitorSetup(ctx, co)
			if err == nil {
				err = watchRun(ctx, co, src, p)
			}
			if err != nil && ctx.Err() == nil {
				if exp != nil {
					exp.Failed(c.Name) // counted in jobtriage_check_errors_total; blind on /healthz
				}
				fmt.Fprintf(co.IO.ErrOut, "error (exit %d), not watched: %s\n", exitCodeFor(err), sanitize.FirstLine(err.Error()))
			}
			codes[i] = exitCodeFor(err)
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil // stopped by a signal: a clean end, as with one watcher
	}
	if w := worstExit(codes...); w != ExitOK {
		return silentExit(w)
	}
	return nil
}
