package triage

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
)

// MonitorSource is a Store with the jobs-table counts and window reads.
type MonitorSource interface {
	Store
	MonitorStore
}

// MonitorSource is the service's store as a monitor reads it; ok is false
// for a store without the jobs-table reads (the file driver's).
func (s *Service) MonitorSource() (src MonitorSource, ok bool) {
	src, ok = s.Store.(MonitorSource)
	return src, ok
}

// QueueRef names a monitored queue as `php artisan queue:monitor` takes it:
// "name", or "connection:name" split on the first colon. The jobs table has
// no connection column, so Connection narrows only the failure counts.
type QueueRef struct {
	Connection string
	Queue      string
}

func (q QueueRef) String() string {
	if q.Connection == "" {
		return q.Queue
	}
	return q.Connection + ":" + q.Queue
}

// maxQueueName is Laravel's jobs.queue column width.
const maxQueueName = 255

// ParseQueueRef reads one queue argument.
func ParseQueueRef(s string) (QueueRef, error) {
	s = strings.TrimSpace(s)
	var r QueueRef
	if conn, queue, ok := strings.Cut(s, ":"); ok {
		r = QueueRef{Connection: strings.TrimSpace(conn), Queue: strings.TrimSpace(queue)}
		if r.Connection == "" {
			return QueueRef{}, fmt.Errorf("%w: queue %q has an empty connection before the colon", ErrInvalidInput, s)
		}
	} else {
		r.Queue = s
	}
	switch {
	case r.Queue == "":
		return QueueRef{}, fmt.Errorf("%w: empty queue name in %q", ErrInvalidInput, s)
	case len(r.Queue) > maxQueueName || len(r.Connection) > maxQueueName:
		return QueueRef{}, fmt.Errorf("%w: queue name longer than %d bytes", ErrInvalidInput, maxQueueName)
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return QueueRef{}, fmt.Errorf("%w: queue name %q contains control characters", ErrInvalidInput, s)
	}
	return r, nil
}

// ParseQueueRefs reads queue arguments, each of which may itself be a
// comma-separated list as artisan's is; duplicates are dropped.
func ParseQueueRefs(args []string) ([]QueueRef, error) {
	var out []QueueRef
	for _, a := range args {
		for _, part := range strings.Split(a, ",") {
			r, err := ParseQueueRef(part)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// matches reports whether a failed job's connection and queue are this ref's.
func (q QueueRef) matches(connection, queue string) bool {
	return q.Queue == queue && (q.Connection == "" || q.Connection == connection)
}

// MonitorParams drives one health check.
type MonitorParams struct {
	// Queues to report; empty means every queue with rows in jobs or
	// failures in the window (how far back failures are counted).
	Queues     []QueueRef
	Now        time.Time
	RetryAfter time.Duration
	Window     time.Duration
	// Connections are the app profile's; empty means failed_jobs' database's
	// jobs table alone, queues tied to no connection.
	Connections []MonitorConnection
	// DefaultConnection is queue.default: the connection a queue named
	// without one is measured on, as queue:monitor does.
	DefaultConnection string
	// Pauses is the app's cache store, which holds the queue pause keys
	// (triage/pause.go); nil when it cannot be read.
	Pauses CacheStore
	// Partial: a connection whose backend cannot be read (a Redis server
	// that is down) is listed in Report.Blind and its error kept in
	// Report.Unread, instead of failing the check: failed_jobs is still
	// counted (the watcher's failure rate).
	Partial bool
}

// MonitorConnection is one queue connection a monitor can (or cannot) see.
type MonitorConnection struct {
	Name         string
	DefaultQueue string // the connection's queue setting, always monitored
	// Local: the jobs table is failed_jobs'; else Backend counts the queues.
	Local      bool
	Backend    QueueBackend
	RetryAfter time.Duration
	// Blind says why its queues cannot be counted (its failures still are).
	Blind string
	// Unsupported: Blind because of the connection's driver (sync, sqs),
	// a fixed fact of the app rather than news on every run.
	Unsupported bool
	// Via is a failover connection's first one, whose counts it takes
	// (FollowFailover); it lists no queues, so none counts twice.
	Via string
}

// FollowFailover makes each failover connection count its first one's.
func FollowFailover(conns []MonitorConnection) []MonitorConnection {
	byName := make(map[string]MonitorConnection, len(conns))
	for _, c := range conns {
		byName[c.Name] = c
	}
	for i, c := range conns {
		if c.Via == "" || c.Blind != "" {
			continue
		}
		to, ok := byName[c.Via]
		switch {
		case !ok:
			c.Blind = fmt.Sprintf("its first connection, %s, is not a queue connection of this app", c.Via)
		case to.Via != "":
			c.Blind = fmt.Sprintf("its first connection, %s, is a failover connection too", c.Via)
		case to.Blind != "":
			c.Blind, c.Unsupported = "counted through its first connection, "+c.Via+": "+to.Blind, to.Unsupported
		default:
			c.Local, c.Backend, c.RetryAfter = to.Local, to.Backend, to.RetryAfter
		}
		c.DefaultQueue = ""
		conns[i] = c
	}
	return conns
}

// QueueHealth is one queue's line of a report.
type QueueHealth struct {
	Connection string `json:"connection,omitempty"`
	Queue      string `json:"queue"`
	Size       int64  `json:"size"`
	Pending    int64  `json:"pending"`
	Delayed    int64  `json:"delayed"`
	Reserved   int64  `json:"reserved"`
	Stuck      int64  `json:"stuck"`
	// OldestPendingAt is when the longest-waiting ready job became
	// available (zero when nothing is pending), as QueueStats has it.
	OldestPendingAt      time.Time     `json:"oldest_pending_at"`
	OldestPendingAge     time.Duration `json:"-"`
	OldestPendingUnknown string        `json:"-"`
	Failed               int64         `json:"failed"` // in the window
	// Paused: workers skip the queue, so its backlog is held, not stuck.
	Paused bool `json:"paused,omitempty"`
}

// Report is one health check.
type Report struct {
	At         time.Time
	Window     time.Duration
	RetryAfter time.Duration
	Queues     []QueueHealth
	// Failed counts the window's failures of the monitored queues (the whole
	// app's when none was named); NoJobsTable: nothing else was counted.
	Failed      int64
	NoJobsTable bool
	// Blind lists the connections whose queues could not be counted, with
	// why ("sqs: jobtriage cannot read sqs queues").
	Blind []string
	// PauseError says why the queues' pause state is unknown ("" when it
	// was read, or there is no cache store to read).
	PauseError string
	// Unread is the first backend that could not be read (Partial only).
	Unread error
}

// Monitor runs one health check: one grouped count over jobs (indexed on
// queue) and one window read of failed_jobs by primary key.
func Monitor(ctx context.Context, st MonitorSource, p MonitorParams) (Report, error) {
	if p.Window <= 0 {
		return Report{}, fmt.Errorf("%w: the failure window must be positive", ErrInvalidInput)
	}
	if p.RetryAfter < 0 {
		return Report{}, fmt.Errorf("%w: retry_after must not be negative", ErrInvalidInput)
	}
	rep := Report{At: p.Now, Window: p.Window, RetryAfter: p.RetryAfter, NoJobsTable: !st.Schema().HasJobs}
	failedBy := map[QueueRef]int64{} // connection and queue of every failure
	err := st.ScanRecentFailed(ctx, RecentParams{Since: p.Now.Add(-p.Window)}, func(r *FailedRow) error {
		failedBy[QueueRef{Connection: r.Connection, Queue: r.Queue}]++
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	refs, err := monitorQueues(ctx, st, p, failedBy, &rep)
	if err != nil {
		return Report{}, err
	}
	for f, n := range failedBy {
		if len(refs) == 0 || slices.ContainsFunc(refs, func(r QueueRef) bool { return r.matches(f.Connection, f.Queue) }) {
			rep.Failed += n
		}
	}
	markPaused(ctx, p, &rep)
	return rep, nil
}

// health is a queue's line of a report, its failures not yet counted.
func health(conn, queue string, s QueueStats, now time.Time) QueueHealth {
	h := QueueHealth{Connection: conn, Queue: queue, Size: s.Size, Pending: s.Pending, Delayed: s.Delayed,
		Reserved: s.Reserved, Stuck: s.Stuck, OldestPendingAt: s.OldestPendingAt, OldestPendingUnknown: s.OldestPendingUnknown}
	if !s.OldestPendingAt.IsZero() {
		h.OldestPendingAge = max(now.Sub(s.OldestPendingAt), 0)
	}
	return h
}

// monitorQueues measures the report's queues, each in its connection's
// backend. Without the app's queue connections (anyConn) the one connection
// is failed_jobs' jobs table, unnamed: queue names are tied to no connection,
// a queue's failures are every connection's unless its ref names one, and
// named queues are reported in the order given. Otherwise queues are
// reported as connection:queue, a queue named without a connection is the
// default connection's, as queue:monitor reads it, and with no queue named
// every connection's default queue and the queues of the window's failures
// are measured. It returns the refs the total of failures counts.
func monitorQueues(ctx context.Context, st MonitorSource, p MonitorParams, failedBy map[QueueRef]int64, rep *Report) ([]QueueRef, error) {
	conns, def, anyConn := p.Connections, p.DefaultConnection, len(p.Connections) == 0
	if anyConn {
		conns, def = []MonitorConnection{{Local: true, RetryAfter: p.RetryAfter}}, ""
	}
	// measured is the connection whose backend counts a queue of conn.
	measured := func(conn string) string {
		if anyConn {
			return ""
		}
		return conn
	}
	byConn := map[string]MonitorConnection{}
	for _, c := range conns {
		byConn[c.Name] = c
	}
	// unread: the connections whose backend failed (Partial), counted by
	// their failures only, as a blind connection is.
	unread := map[string]bool{}
	failBackend := func(conn string, err error) error {
		if !p.Partial {
			return err
		}
		unread[conn] = true
		rep.Blind = append(rep.Blind, conn+": "+err.Error())
		if rep.Unread == nil {
			rep.Unread = err
		}
		return nil
	}
	// The queues to measure, per connection, in a stable order.
	want := map[string][]string{}
	addQueue := func(conn, queue string) {
		if !slices.Contains(want[conn], queue) {
			want[conn] = append(want[conn], queue)
		}
	}
	// every: a connection's counts of all its queues, read while listing
	// them, so its queues are not counted again.
	every := map[string][]QueueStats{}
	refs := make([]QueueRef, 0, len(p.Queues))
	for _, r := range p.Queues {
		r.Connection = cmp.Or(r.Connection, def)
		refs = append(refs, r)
		addQueue(measured(r.Connection), r.Queue)
	}
	if len(refs) == 0 {
		// Local connections share failed_jobs' jobs table: its queues are
		// listed under the first only, so none is summed twice.
		listedLocal := false
		for _, c := range conns {
			if c.Blind == "" && c.DefaultQueue != "" {
				addQueue(c.Name, c.DefaultQueue)
			}
			// Every queue holding jobs, where the backend can list them.
			var listed []string
			switch ql, ok := c.Backend.(QueueLister); {
			case c.Blind != "" || c.Via != "":
			case c.Local && !rep.NoJobsTable && !listedLocal:
				listedLocal = true
				got, err := st.QueueStats(ctx, QueueStatsParams{Now: p.Now, RetryAfter: cmp.Or(p.RetryAfter, c.RetryAfter)})
				if err != nil {
					return nil, err
				}
				every[c.Name] = got
				for _, s := range got {
					listed = append(listed, s.Queue)
				}
			case ok:
				got, err := ql.Queues(ctx)
				if err != nil {
					if err := failBackend(c.Name, fmt.Errorf("listing the queues of connection %s (%s): %w", c.Name, c.Backend.Describe(), err)); err != nil {
						return nil, err
					}
				}
				listed = got
			}
			for _, q := range listed {
				addQueue(c.Name, q)
			}
		}
		for f := range failedBy {
			addQueue(measured(f.Connection), f.Queue)
		}
	}
	for _, c := range conns {
		if c.Blind != "" {
			rep.Blind = append(rep.Blind, c.Name+": "+c.Blind)
		}
	}
	stats := map[QueueRef]QueueStats{}
	var rows []QueueRef
	for _, conn := range slices.Sorted(maps.Keys(want)) {
		queues := want[conn]
		slices.Sort(queues)
		c, known := byConn[conn]
		got, listed := every[conn]
		var err error
		switch {
		case listed:
		case !known || c.Blind != "" || unread[conn]:
			// Failures only; the connection is listed in Blind (or not in
			// the profile at all).
		case c.Local && rep.NoJobsTable:
		case c.Local:
			got, err = st.QueueStats(ctx, QueueStatsParams{Queues: queues, Now: p.Now, RetryAfter: cmp.Or(p.RetryAfter, c.RetryAfter)})
		case c.Backend != nil:
			if got, err = c.Backend.Stats(ctx, QueueStatsParams{Queues: queues, Now: p.Now, RetryAfter: c.RetryAfter}); err != nil {
				err = failBackend(conn, fmt.Errorf("counting the queues of connection %s (%s): %w", conn, c.Backend.Describe(), err))
			}
		}
		if err != nil {
			return nil, err
		}
		for _, s := range got {
			stats[QueueRef{Connection: conn, Queue: s.Queue}] = s
		}
		for _, q := range queues {
			rows = append(rows, QueueRef{Connection: conn, Queue: q})
		}
	}
	if anyConn && len(refs) > 0 {
		rows = refs
	}
	for _, r := range rows {
		h := health(r.Connection, r.Queue, stats[QueueRef{Connection: measured(r.Connection), Queue: r.Queue}], p.Now)
		for f, n := range failedBy {
			if f == r || anyConn && r.matches(f.Connection, f.Queue) {
				h.Failed += n
			}
		}
		rep.Queues = append(rep.Queues, h)
	}
	return refs, nil
}

// Thresholds are the limits of a health check; zero disables one. Every
// comparison is inclusive, as queue:monitor's size >= max is.
type Thresholds struct {
	MaxSize   int64
	MaxAge    time.Duration
	MaxFailed int64
}

// Breach is one crossed threshold; Value and Limit are in the measure's base
// unit (jobs, or seconds for oldest_pending_age).
type Breach struct {
	// Queue is the queue it concerns ("connection:queue" where the
	// connection is known); "" for the whole monitored set.
	Queue   string `json:"queue,omitempty"`
	Measure string `json:"measure"` // "size", "oldest_pending_age" or "failed"
	Value   int64  `json:"value"`
	Limit   int64  `json:"limit"`
	// WindowSeconds is the failure window of a "failed" breach.
	WindowSeconds int64 `json:"window_seconds,omitempty"`
}

func (b Breach) String() string {
	where := "all monitored queues"
	if b.Queue != "" {
		where = "queue " + b.Queue
	}
	value, limit := fmt.Sprint(b.Value), fmt.Sprint(b.Limit)
	switch b.Measure {
	case "oldest_pending_age":
		value = (time.Duration(b.Value) * time.Second).String()
		limit = (time.Duration(b.Limit) * time.Second).String()
	case "failed":
		limit += " in " + (time.Duration(b.WindowSeconds) * time.Second).String()
	}
	return fmt.Sprintf("%s: %s %s ≥ %s", where, b.Measure, value, limit)
}

// Check lists the thresholds the report crosses, in queue order.
func (r Report) Check(t Thresholds) []Breach {
	var out []Breach
	for _, q := range r.Queues {
		name := QueueRef{Connection: q.Connection, Queue: q.Queue}.String()
		if q.Paused {
			continue // held on purpose: its backlog is no breach (failures still are)
		}
		if t.MaxSize > 0 && q.Size >= t.MaxSize {
			out = append(out, Breach{Queue: name, Measure: "size", Value: q.Size, Limit: t.MaxSize})
		}
		if t.MaxAge > 0 && !q.OldestPendingAt.IsZero() && q.OldestPendingAge >= t.MaxAge {
			out = append(out, Breach{Queue: name, Measure: "oldest_pending_age",
				Value: int64(q.OldestPendingAge / time.Second), Limit: int64(t.MaxAge / time.Second)})
		}
	}
	if t.MaxFailed > 0 && r.Failed >= t.MaxFailed {
		out = append(out, Breach{Measure: "failed", Value: r.Failed, Limit: t.MaxFailed,
			WindowSeconds: int64(r.Window / time.Second)})
	}
	return out
}
