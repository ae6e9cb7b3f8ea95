package cmd

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
)

// lazy opens what it wraps on first use, so that a command that never
// touches a connection (a retry of database jobs only, --help) never dials
// it. A failed open is tried again on the next use: a watcher sees a Redis
// server that came back.
type lazy[T any] struct {
	describe string
	open     func(ctx context.Context) (T, error)

	mu     sync.Mutex
	opened bool
	v      T
}

func (l *lazy[T]) get(ctx context.Context) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.opened {
		// An opener that fails may return a typed nil (*redisqueue.Backend),
		// which is nothing to keep or close.
		v, err := l.open(ctx)
		if err != nil {
			var zero T
			return zero, err
		}
		l.v, l.opened = v, true
	}
	return l.v, nil
}

func (l *lazy[T]) Describe() string { return l.describe }

// use calls fn with the opened value.
func use[T, R any](ctx context.Context, l *lazy[T], fn func(T) (R, error)) (R, error) {
	v, err := l.get(ctx)
	if err != nil {
		var zero R
		return zero, err
	}
	return fn(v)
}

// lazyBackend is a queue backend opened on first use.
type lazyBackend struct{ lazy[triage.QueueBackend] }

var (
	_ triage.QueueBackend   = (*lazyBackend)(nil)
	_ triage.JobStateReader = (*lazyBackend)(nil)
)

func (l *lazyBackend) Push(ctx context.Context, moves []triage.Move, now time.Time) (triage.PushResult, error) {
	return use(ctx, &l.lazy, func(b triage.QueueBackend) (triage.PushResult, error) { return b.Push(ctx, moves, now) })
}

func (l *lazyBackend) Stats(ctx context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	return use(ctx, &l.lazy, func(b triage.QueueBackend) ([]triage.QueueStats, error) { return b.Stats(ctx, p) })
}

// Queues lists the backend's queues when it can (triage.QueueLister).
func (l *lazyBackend) Queues(ctx context.Context) ([]string, error) {
	return use(ctx, &l.lazy, func(b triage.QueueBackend) ([]string, error) {
		if ql, ok := b.(triage.QueueLister); ok {
			return ql.Queues(ctx)
		}
		return nil, nil
	})
}

// JobStates says where the backend's jobs are (triage.JobStateReader); a
// backend that cannot answers Partial: retry --follow never takes "not seen" for done.
func (l *lazyBackend) JobStates(ctx context.Context, p triage.JobStatesParams) (triage.JobStates, error) {
	return use(ctx, &l.lazy, func(b triage.QueueBackend) (triage.JobStates, error) {
		if r, ok := b.(triage.JobStateReader); ok {
			return r.JobStates(ctx, p)
		}
		return triage.JobStates{ByUUID: map[string]triage.JobState{}, Partial: true}, nil
	})
}

func (l *lazyBackend) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.opened {
		return nil
	}
	return l.v.Close()
}

// backendOpeners builds the queue backends of connections other than the
// failed_jobs database's own jobs table. Tests replace them with fakes.
type backendOpeners struct {
	// Redis opens a redis queue connection.
	Redis func(ctx context.Context, rc appprofile.RedisConnection, retryAfter time.Duration) (triage.QueueBackend, error)
	// Database opens the jobs table of another database.
	Database func(ctx context.Context, dc appprofile.DatabaseConnection, table string) (triage.QueueBackend, error)
}

// queueRoutes turns the app's queue connections into routes (where retry
// puts their jobs, with a reason where it cannot) and what monitor counts.
func queueRoutes(cfg appprofile.Config, open backendOpeners) (map[string]triage.Route, []triage.MonitorConnection) {
	// Outside an app (no artisan found) the queue connections are only
	// jobtriage's defaults, not the app's: keep to the database queue.
	if cfg.Profile == nil || !cfg.Profile.IsApp || len(cfg.Queues) == 0 {
		return nil, nil
	}
	routes := map[string]triage.Route{}
	var conns []triage.MonitorConnection
	dbDefault, _ := cfg.Profile.Get("database.default").String()
	failedConn := cmp.Or(cfg.Failed.Database, dbDefault)
	for _, qc := range cfg.Queues {
		r := triage.Route{Connection: qc.Name, Driver: qc.Driver}
		mc := triage.MonitorConnection{Name: qc.Name, DefaultQueue: qc.Queue, RetryAfter: time.Duration(qc.RetryAfter) * time.Second}
		switch qc.Driver {
		case triage.DriverDatabase:
			conn := cmp.Or(qc.Connection, dbDefault)
			if conn == failedConn {
				r.Local, mc.Local = true, true
				break
			}
			dc, err := cfg.Profile.DatabaseConnectionNamed(conn)
			if err != nil {
				r.Reason = fmt.Sprintf("connection %q queues to database connection %q: %v", qc.Name, conn, err)
				mc.Blind = r.Reason
				break
			}
			table := dc.Prefix + qc.Table
			lb := &lazyBackend{lazy[triage.QueueBackend]{describe: fmt.Sprintf("%s table %s", dc.Target.Redacted(), table),
				open: func(ctx context.Context) (triage.QueueBackend, error) { return open.Database(ctx, dc, table) }}}
			r.Backend, mc.Backend = lb, lb
		case triage.DriverRedis:
			rc, err := cfg.Profile.Redis(cmp.Or(qc.Connection, "default"))
			if err != nil {
				r.Reason = fmt.Sprintf("connection %q: %v", qc.Name, err)
				mc.Blind = r.Reason
				break
			}
			retryAfter := mc.RetryAfter
			lb := &lazyBackend{lazy[triage.QueueBackend]{describe: fmt.Sprintf("%s (prefix %q)", rc.Redacted(), rc.Prefix),
				open: func(ctx context.Context) (triage.QueueBackend, error) { return open.Redis(ctx, rc, retryAfter) }}}
			r.Backend, mc.Backend = lb, lb
		case triage.DriverFailover:
			// Retry pushes where triage.ResolveFailover points it; monitor
			// counts through the first connection (triage.FollowFailover).
			r.Failover = qc.Connections
			if len(qc.Connections) > 0 {
				mc.Via = qc.Connections[0]
			} else {
				mc.Blind = "a failover connection that lists no connections"
			}
		default:
			r.Reason = triage.UnwritableReason(qc.Name, qc.Driver)
			mc.Blind = triage.UnreadableReason(qc.Driver)
			mc.Unsupported = true
		}
		routes[qc.Name] = r
		conns = append(conns, mc)
	}
	triage.ResolveFailover(routes)
	return routes, triage.FollowFailover(conns)
}
