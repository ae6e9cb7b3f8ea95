package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// PauseOptions are the inputs of `jobtriage pause` and `jobtriage resume`.
type PauseOptions struct {
	IO    *IOStreams
	Now   func() time.Time
	Audit func(auditEntry) error
	// Store opens the app's default cache store; Target names it (with the
	// app and the context) for confirmations and summaries.
	Store  func(context.Context) (triage.CacheStore, error)
	Target func(store string) string

	Resume bool
	Queues []triage.QueueRef
	All    bool
	For    time.Duration
	DryRun bool
	Yes    bool
	JSON   bool
	args   []string
}

// NewCmdPause builds `jobtriage pause`.
func NewCmdPause(f *Factory, runF func(context.Context, *PauseOptions) error) *cobra.Command {
	return newCmdPauseResume(f, runF, false)
}

// NewCmdResume builds `jobtriage resume`.
func NewCmdResume(f *Factory, runF func(context.Context, *PauseOptions) error) *cobra.Command {
	return newCmdPauseResume(f, runF, true)
}

func newCmdPauseResume(f *Factory, runF func(context.Context, *PauseOptions) error, resume bool) *cobra.Command {
	opts := &PauseOptions{IO: f.IO, Now: f.Now, Resume: resume, Audit: func(e auditEntry) error { return audit(f, e) }}
	cmd := &cobra.Command{
		Use:   "pause {<connection>:<queue>... | --all}",
		Short: "Pause queues as php artisan queue:pause does",
		Long: heredoc.Doc(`
			Pause queues: workers (Laravel 12.40+) finish the job they are running and
			take no new jobs from a paused queue until it is resumed. jobtriage writes
			exactly what php artisan queue:pause writes, in the app's default cache store
			(config/cache.php): the key illuminate:queue:paused:<connection>:<queue>, or
			illuminate:queues:paused for --all, with the cache prefix. The connection is
			the queue connection the worker runs (database, redis, …).

			The database and Redis cache stores are supported; for the file, memcached,
			dynamodb and array stores use php artisan queue:pause. --for pauses until the
			key expires (whole seconds); without it the pause lasts until resume.
			An app that turns pause polling off (Worker::$pausable = false, or
			Queue::withoutInterruptionPolling()) ignores the keys: that is PHP code, which
			jobtriage cannot see. It asks first on a terminal and needs --yes otherwise.
		`),
		Example: examples(heredoc.Doc(`
			  $ jobtriage pause database:emails --dry-run
			  $ jobtriage pause redis:default redis:reports --for 15m --yes
			  $ jobtriage pause --all
		`)),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Store = f.PauseStore
			opts.Target = f.pauseTarget
			opts.args = append([]string{c.Name()}, args...)
			if len(args) == 0 && !opts.All {
				return FlagErrorf("name <connection>:<queue> pairs, or --all")
			}
			refs, err := triage.ParseQueueRefs(args)
			if err != nil {
				return err
			}
			for _, r := range refs {
				if r.Connection == "" {
					return FlagErrorf("%s: name the queue with its connection, as the worker runs it: <connection>:<queue> (for example database:%s)", r.Queue, r.Queue)
				}
			}
			opts.Queues = refs
			if c.Flags().Changed("for") && (opts.For < time.Second || opts.For%time.Second != 0) {
				return FlagErrorf("--for %s: want a duration of whole seconds, at least 1s (30s, 15m, 2h, 1d)", opts.For)
			}
			return runOr(c.Context(), opts, runF, pauseRun)
		},
	}
	if resume {
		cmd.Use = "resume {<connection>:<queue>... | --all}"
		cmd.Short = "Resume paused queues as php artisan queue:resume does"
		cmd.Long = heredoc.Doc(`
			Resume queues paused by jobtriage pause or php artisan queue:pause: delete
			their keys from the app's default cache store. --all deletes only the global
			key (illuminate:queues:paused); queues paused one by one stay paused, as with
			php artisan queue:resume --all.
			It asks first on a terminal and needs --yes otherwise.
		`)
		cmd.Example = examples(heredoc.Doc(`
			  $ jobtriage resume database:emails --yes
			  $ jobtriage resume --all --dry-run
		`))
	} else {
		durationVar(cmd.Flags(), &opts.For, "for", 0, "pause for this long (30s, 15m, 2h, 1d), then resume by itself")
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every queue of every connection (the global key)")
	writeFlags(cmd, &opts.DryRun, "show the keys and their state; change nothing", &opts.Yes, &opts.JSON)
	return cmd
}

// pauseDoc is the --json output.
type pauseDoc struct {
	SchemaVersion int    `json:"schema_version"`
	Action        string `json:"action"` // "pause" or "resume"
	triage.PauseResult
	// Until is a timed pause's end, RFC 3339; omitted otherwise.
	Until *string `json:"until,omitempty"`
}

// pauseSchemaVersion is the version of pause's and resume's JSON (docs/json.md).
const pauseSchemaVersion = 1

func pauseRun(ctx context.Context, opts *PauseOptions) error {
	cs, err := opts.Store(ctx)
	if err != nil {
		return err
	}
	verb, action := "Pause", "pause"
	if opts.Resume {
		verb, action = "Resume", "resume"
	}
	do := func(dry bool) (triage.PauseResult, error) {
		p := triage.PauseParams{Queues: opts.Queues, All: opts.All, For: opts.For, DryRun: dry, Now: opts.Now()}
		if opts.Resume {
			return triage.Resume(ctx, cs, p)
		}
		return triage.Pause(ctx, cs, p)
	}
	target := opts.Target(cs.Describe())
	if opts.DryRun {
		res, err := do(true)
		if err != nil {
			return err
		}
		return reportPause(opts, action, res, target)
	}
	question := fmt.Sprintf("%s %s%s?", verb, pauseSubject(opts), target)
	if err := confirm(opts.IO, opts.Yes, question); err != nil {
		return err
	}
	var res triage.PauseResult
	err = audited(opts.Audit, auditEntry{Command: action, Args: opts.args}, func(e *auditEntry) (err error) {
		res, err = do(false)
		for _, c := range res.Changes {
			e.IDs = append(e.IDs, c.StoredKey)
		}
		e.Count = int64(len(e.IDs))
		return err
	})
	if err != nil {
		return err
	}
	return reportPause(opts, action, res, target)
}

// pauseSubject names what a pause or resume changes, for the question.
func pauseSubject(opts *PauseOptions) string {
	var parts []string
	if opts.All {
		parts = append(parts, "every queue (--all)")
	}
	for _, q := range opts.Queues {
		parts = append(parts, q.String())
	}
	s := strings.Join(parts, ", ")
	if opts.For > 0 {
		s += " for " + opts.For.String()
	}
	return sanitize.Line(s)
}

func reportPause(opts *PauseOptions, action string, res triage.PauseResult, target string) error {
	if opts.JSON {
		doc := pauseDoc{SchemaVersion: pauseSchemaVersion, Action: action, PauseResult: res}
		if !res.Until.IsZero() {
			doc.Until = new(rfc3339(res.Until))
		}
		return writeJSON(opts.IO.Out, doc)
	}
	// By [dry run, resume]: the verb, and the remark on a key that was
	// paused and on one that was not.
	words := map[[2]bool][3]string{{true, false}: {"Would pause", " (already paused)", ""}, {true, true}: {"Would resume", "", " (not paused)"},
		{false, false}: {"Paused", " (it already was)", ""}, {false, true}: {"Resumed", "", " (it was not paused)"}}[[2]bool{res.DryRun, action == "resume"}]
	for _, c := range res.Changes {
		was := words[2]
		if c.WasPaused {
			was = words[1]
		}
		line := words[0] + " " + c.Queue + was
		if c.Queue == "*" {
			line = strings.Replace(line, " *", " every queue", 1)
		}
		if !res.Until.IsZero() {
			line += " until " + res.Until.UTC().Format(time.RFC3339)
		}
		fmt.Fprintln(opts.IO.Out, sanitize.Line(line)+" (key "+sanitize.Line(c.StoredKey)+")"+target+".")
	}
	if action == "resume" && opts.All && !res.DryRun {
		fmt.Fprintln(opts.IO.ErrOut, "note: queues paused one by one stay paused, as with php artisan queue:resume --all")
	}
	return nil
}

// lazyCacheStore is opened on first use: monitor and retry read pause keys only for queues.
type lazyCacheStore struct{ lazy[triage.CacheStore] }

func (l *lazyCacheStore) Present(ctx context.Context, keys []string, now time.Time) (map[string]bool, error) {
	return use(ctx, &l.lazy, func(cs triage.CacheStore) (map[string]bool, error) { return cs.Present(ctx, keys, now) })
}

func (l *lazyCacheStore) Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error {
	_, err := use(ctx, &l.lazy, func(cs triage.CacheStore) (struct{}, error) { return struct{}{}, cs.Put(ctx, key, value, ttl, now) })
	return err
}

func (l *lazyCacheStore) Forget(ctx context.Context, key string) error {
	_, err := use(ctx, &l.lazy, func(cs triage.CacheStore) (struct{}, error) { return struct{}{}, cs.Forget(ctx, key) })
	return err
}

func (l *lazyCacheStore) StoredKey(key string) string {
	if cs, err := l.get(context.Background()); err == nil {
		return cs.StoredKey(key)
	}
	return key
}

// warnPausedQueues says on stderr which queues a retry pushed onto are
// paused; best effort: a store that cannot be read says nothing.
func warnPausedQueues(ctx context.Context, ios *IOStreams, svc *triage.Service, refs []triage.QueueRef) {
	if svc == nil || svc.Pauses == nil || len(refs) == 0 {
		return
	}
	states, err := triage.PauseStates(ctx, svc.Pauses, refs, svc.Now())
	if err != nil {
		return
	}
	var paused []string
	for _, r := range refs {
		if states[r].Paused {
			paused = append(paused, r.String())
		}
	}
	if len(paused) > 0 {
		fmt.Fprintf(ios.ErrOut, "note: %s paused: workers will not take the retried jobs until jobtriage resume (or php artisan queue:resume)\n",
			sanitize.Line(strings.Join(paused, ", ")+map[bool]string{true: " is", false: " are"}[len(paused) == 1]))
	}
}
