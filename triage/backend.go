package triage

import (
	"context"
	"time"
)

// QueueBackend is where one queue connection's jobs live: the jobs table of
// a database other than failed_jobs', Redis, and whatever comes next (SQS,
// beanstalkd) — river's driver shape, one package per backend. The jobs
// table in the same database as failed_jobs is not a QueueBackend: there the
// store moves a batch in one transaction (Batch.Commit, Move.Local), which is
// stronger than any two-store protocol.
//
// Every backend proves the same contract in triage/backendtest.
type QueueBackend interface {
	// Describe names the backend for confirmations and summaries, without
	// secrets: "redis://127.0.0.1:6379/0 (prefix laravel_database_)".
	Describe() string
	// Push queues each move on m.Queue exactly as the connection's Laravel
	// driver would push it, exactly once by payload uuid: a move whose uuid
	// this backend already pushed (in an earlier run that crashed before
	// deleting the failed_jobs row, or in this one) is not pushed again,
	// even when a worker has meanwhile run the job. It returns only when
	// every pushed job is durable in the backend (committed, acknowledged).
	Push(ctx context.Context, moves []Move, now time.Time) (PushResult, error)
	// Stats counts the backend's queues with Laravel's meanings (see
	// QueueStats). p.Queues names the queues to report; a backend that
	// cannot list its queues (Redis) reports exactly those, with zero
	// counts where a queue is empty.
	Stats(ctx context.Context, p QueueStatsParams) ([]QueueStats, error)
	Close() error
}

// QueueLister is a backend that can name the queues holding jobs, so that
// a monitor run without arguments sees every queue, not only the default.
type QueueLister interface {
	Queues(ctx context.Context) ([]string, error)
}

// PushResult says what one Push did.
type PushResult struct {
	// Pushed moves were queued by this call.
	Pushed int
	// Already moves were found pushed before (their uuid's marker or
	// record exists) and were not queued again.
	Already int
}

// Queue connection drivers, as config/queue.php names them.
const (
	DriverDatabase   = "database"
	DriverRedis      = "redis"
	DriverSync       = "sync"
	DriverSQS        = "sqs"
	DriverBeanstalkd = "beanstalkd"
	DriverNull       = "null"
	// DriverFailover pushes to each of its listed connections in turn
	// until one takes the job (Laravel 12.34+).
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

// JobStatesParams asks where jobs are, by payload uuid, queue by queue:
// a backend looks only at the named queues.
type JobStatesParams struct {
	// UUIDs are the payload uuids to look for, by queue name.
	UUIDs map[string][]string
}

// JobStates is a backend's answer: the jobs it holds, by payload uuid. A
// uuid absent from ByUUID is not on its queue, unless Partial says a
// queue was longer than the backend reads in one call (MaxJobStateScan);
// then absence proves nothing, and a follower waits for a later call.
type JobStates struct {
	ByUUID  map[string]JobState
	Partial bool
}

// MaxJobStateScan bounds the jobs one JobStates call reads per queue (its
// waiting, reserved and delayed jobs together), newest first: the cost of
// following stays bounded however long a queue grows.
const MaxJobStateScan = 100000

// JobStateReader is a queue backend that can say where jobs it holds are:
// waiting, running (reserved), or gone. retry --follow uses it; a backend
// without it cannot be followed. The database jobs table in failed_jobs'
// database (a local route) is read through the Store, which implements it
// too.
type JobStateReader interface {
	JobStates(ctx context.Context, p JobStatesParams) (JobStates, error)
}
