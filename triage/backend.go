package triage

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// QueueBackend is where one queue connection's jobs live: the jobs table of
// a database other than failed_jobs', Redis, and whatever comes next —
// river's driver shape, one package per backend, each proving the contract
// in triage/backendtest. The jobs table beside failed_jobs is none: there
// the store moves a batch in one transaction (Move.Local).
type QueueBackend interface {
	// Describe names the backend for confirmations and summaries, without
	// secrets: "redis://127.0.0.1:6379/0 (prefix laravel_database_)".
	Describe() string
	// Push queues each move on m.Queue exactly as the connection's Laravel
	// driver would, once by Move.PushKey: a move this backend already
	// pushed (in a run that crashed before deleting its row, or in this
	// one) is not pushed again, even once a worker ran it. It returns once
	// every pushed job is durable (committed, acknowledged).
	Push(ctx context.Context, moves []Move, now time.Time) (PushResult, error)
	// Stats counts p.Queues with Laravel's meanings (QueueStats); one that
	// cannot list its queues (Redis) reports exactly those.
	Stats(ctx context.Context, p QueueStatsParams) ([]QueueStats, error)
	Close() error
}

// QueueLister is a backend that can name the queues holding jobs, so that
// a monitor run without arguments sees every queue, not only the default.
type QueueLister interface {
	Queues(ctx context.Context) ([]string, error)
}

// PushResult says what one Push did: the moves it queued, and those it
// found pushed before (a marker or record exists) and did not queue again.
type PushResult struct {
	Pushed, Already int
}

// Queue connection drivers, as config/queue.php names them.
const (
	DriverDatabase   = "database"
	DriverRedis      = "redis"
	DriverSync       = "sync"
	DriverSQS        = "sqs"
	DriverBeanstalkd = "beanstalkd"
	DriverNull       = "null"
	// DriverFailover pushes to its connections in turn (Laravel 12.34+).
	DriverFailover = "failover"
)

// JobState is where a pushed job is in its queue backend.
type JobState int

const (
	// JobWaiting: on its queue, available or delayed (released, backoff).
	JobWaiting JobState = iota + 1
	// JobRunning: reserved by a worker.
	JobRunning
)

func (s JobState) String() string {
	switch s {
	case JobWaiting:
		return "waiting"
	case JobRunning:
		return "running"
	}
	return "absent"
}

// JobStatesParams asks where jobs are: the payload uuids to look for, by
// queue name (a backend looks only at the named queues); a queue named
// without uuids reports every job on it.
type JobStatesParams struct {
	UUIDs map[string][]string
}

// JobStates is a backend's answer, by payload uuid: an absent uuid is not on
// its queue, unless Partial (MaxJobStateScan).
type JobStates struct {
	ByUUID  map[string]JobState
	Partial bool
}

// MaxJobStateScan bounds the jobs one JobStates call reads per queue, newest
// first, however long a queue grows.
const MaxJobStateScan = 100000

// JobStateReader is a queue backend that can say where jobs it holds are:
// waiting, running (reserved), or gone; retry --follow needs it. A local
// route's jobs table is read through the Store, which implements it too.
type JobStateReader interface {
	JobStates(ctx context.Context, p JobStatesParams) (JobStates, error)
}

// QueuedReader is a batch that can say which of its moves' uuids already
// wait or run in its database's jobs table, asked in the batch's own
// transaction (SQLite has one connection).
type QueuedReader interface {
	QueuedUUIDs(ctx context.Context, moves []Move) (map[string]bool, error)
}

// ErrInDoubt marks a push that may have run although it failed: the
// backend stopped answering, or the connection broke, after it was sent.
var ErrInDoubt = errors.New("push in doubt")

// PushInDoubt ends a retry whose push stayed in doubt for ResolveWait: the
// jobs may be on their queues and are still in failed_jobs. Retrying them
// again reconciles, since a push finds what it pushed before (Push).
type PushInDoubt struct {
	IDs   []string
	Cause error
}

func (e *PushInDoubt) Error() string {
	return fmt.Sprintf("%v; %d job(s) may be queued and are still in failed_jobs: once the queue answers, reconcile with jobtriage retry %s (it pushes none of them twice)",
		e.Cause, len(e.IDs), strings.Join(e.IDs, " "))
}

func (e *PushInDoubt) Unwrap() error { return e.Cause }

// PushRecorder is a backend that can record the uuids it pushed (the
// jobs-table ledger), so that a run repeated after a crash between push and
// delete never queues again a job that already ran; RecordsPushes says
// whether this one does.
type PushRecorder interface {
	RecordsPushes() bool
}

// UnrecordedTargets names the backends of targets that push without a
// record although they could keep one: there a crash between push and
// delete, a worker run and a re-run queue a job twice.
func (s *Service) UnrecordedTargets(targets []QueueRef) []string {
	var out []string
	for _, t := range targets {
		b := s.Router.For(t.Connection).Backend
		if pr, ok := b.(PushRecorder); ok && !pr.RecordsPushes() && !slices.Contains(out, b.Describe()) {
			out = append(out, b.Describe())
		}
	}
	return out
}
