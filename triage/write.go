package triage

import (
	"context"
	"time"
)

// RetryParams selects failed jobs to put back on their queues.
type RetryParams struct {
	// Query selects by filter when Refs is empty.
	Query
	// Refs are explicit ids; when set, Query is ignored.
	Refs []Ref
	// All must be set to retry with an empty Query and no Refs, so that an
	// empty filter never means "everything" by accident.
	All bool
	// Limit retries only the N oldest matches: a canary before the rest.
	Limit int
	// ToQueue overrides each job's recorded queue.
	ToQueue string
	// RetryUntil gives jobs whose retryUntil has passed a new deadline of
	// now+RetryUntil; zero skips such jobs (they would fail at once).
	RetryUntil time.Duration
	// DryRun reports what would happen and changes nothing.
	DryRun bool
	// Progress, when set, is told how many jobs are done so far.
	Progress func(done int)
	// OnBatch, when set, receives the ids and the skips of each batch once
	// it has committed (dry: once it is planned), and RetryResult.IDs and
	// Skipped stay empty: retrying, or skipping, a million jobs then holds
	// no list of a million.
	OnBatch func(ids []string, skips []Skip) error
	// OnPushed, when set, receives the jobs of each batch once it has
	// committed (never in a dry run), with what a follower needs to find
	// them in their backend: retry --follow watches them from here.
	OnPushed func([]Pushed)
	// BatchSize is the most rows one batch moves; 0 is WriteBatch. Pacing
	// uses small batches so that pushes are spread, not bursts.
	BatchSize int
	// BeforeBatch, when set, runs before each batch with the number of
	// jobs retried so far; a pacer waits in it. Its error ends the run.
	BeforeBatch func(ctx context.Context, retried int) error
	// Stop, when set, is asked before each batch; true ends the run with
	// the rest of the selection left in failed_jobs (a breaker tripped).
	Stop func() bool
	// Exclude names payload uuids the run passes over silently, leaving
	// them in failed_jobs: canaries that failed again and are back there.
	Exclude map[string]bool
}

// Pushed is one job a retry put back on its queue.
type Pushed struct {
	// UUID is the payload uuid, the job's identity in its backend and,
	// when it fails again, in failed_jobs; "" for a payload without one.
	UUID string
	// ID is how the operator addresses the failed job it came from.
	ID         string
	Class      string
	Connection string
	Queue      string
}

// Skip is a job a bulk action left alone, and why.
type Skip struct {
	ID         string `json:"id"`
	Class      string `json:"class"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	// Code names the kind of reason: SkipNotDatabase, SkipRetryUntil, SkipMalformed.
	Code   string `json:"code"`
	Reason string `json:"reason"`
}

// Skip codes.
const (
	SkipNotDatabase = "not_database_connection"
	SkipRetryUntil  = "retry_until_expired"
	SkipMalformed   = "malformed_payload"
	SkipNoJobsTable = "no_jobs_table"
)

// RetryResult says what a retry did (or, dry, would do).
type RetryResult struct {
	DryRun   bool           `json:"dry_run"`
	Retried  int            `json:"retried"`
	IDs      []string       `json:"ids"`
	ByQueue  map[string]int `json:"by_queue"`
	ByClass  map[string]int `json:"by_class"`
	Skipped  []Skip         `json:"skipped"`
	NotFound []string       `json:"not_found"`
}

// ForgetParams selects failed jobs to delete.
type ForgetParams struct {
	Query
	Refs     []Ref
	All      bool
	DryRun   bool
	Progress func(done int)
	// OnBatch is RetryParams.OnBatch for ForgetResult.IDs.
	OnBatch func(ids []string) error
	// Archive receives each batch's rows whole before they are deleted
	// (BatchParams.Archive); not called on a dry run.
	Archive func(rows []RawRow) error
}

// ForgetResult says what a forget did.
type ForgetResult struct {
	DryRun   bool     `json:"dry_run"`
	Deleted  int      `json:"deleted"`
	IDs      []string `json:"ids"`
	NotFound []string `json:"not_found"`
}
