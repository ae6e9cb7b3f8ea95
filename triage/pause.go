package triage

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Laravel's queue pause state (QueueManager::pause, 12.40+; pauseAll 13.25+)
// is a key in the app's cache store each worker reads per loop.
const (
	// pausedQueueKeyPrefix is followed by "{connection}:{queue}".
	pausedQueueKeyPrefix = "illuminate:queue:paused:"
	// AllQueuesPausedKey pauses every queue (queue:pause --all); resuming it
	// leaves per-queue pauses alone, as resumeAll does.
	AllQueuesPausedKey = "illuminate:queues:paused"
	// PausedValue is serialize(true), the value pause writes.
	PausedValue = "b:1;"
)

// ErrPauseUnsupported: the app's cache store is one jobtriage cannot
// write or read (file, memcached, dynamodb, array, …).
var ErrPauseUnsupported = errors.New("queue pause unsupported")

// PausedQueueKey is the cache key that pauses one queue of a connection.
func PausedQueueKey(ref QueueRef) string {
	return pausedQueueKeyPrefix + ref.Connection + ":" + ref.Queue
}

// CacheStore is the app's default cache store for the pause keys: it adds the
// cache prefix (and Redis's) to Laravel's keys.
type CacheStore interface {
	// Present reports which keys hold a value PHP reads as true that has not
	// expired at now (a row counts while expiration > now).
	Present(ctx context.Context, keys []string, now time.Time) (map[string]bool, error)
	// Put stores value until now+ttl; ttl 0 is forever (Repository::forever).
	Put(ctx context.Context, key, value string, ttl time.Duration, now time.Time) error
	// Forget deletes key; deleting a missing key is no error.
	Forget(ctx context.Context, key string) error
	// StoredKey is key as the store writes it, prefixes included.
	StoredKey(key string) string
	// Describe names the store and where it is, without secrets.
	Describe() string
}

// PauseParams are one pause or resume: CONNECTION:QUEUE pairs, the global key
// (All), and For, a timed pause (0: until resumed).
type PauseParams struct {
	Queues []QueueRef
	All    bool
	For    time.Duration
	DryRun bool
	Now    time.Time
}

// PauseChange is one key a pause or resume writes, and its state before.
type PauseChange struct {
	Queue     string `json:"queue"` // "connection:queue", or "*" for the global key
	Key       string `json:"key"`
	StoredKey string `json:"stored_key"`
	WasPaused bool   `json:"was_paused"`
}

// PauseResult is what a pause or resume did (or, DryRun, would do).
type PauseResult struct {
	Store   string        `json:"store"`
	Changes []PauseChange `json:"changes"`
	DryRun  bool          `json:"dry_run"`
	Until   time.Time     `json:"-"` // when a timed pause ends; else zero
}

// allQueuesLabel is the Queue of the global key's change.
const allQueuesLabel = "*"

// pauseKeys is the plan: the keys, with their labels, in argument order.
func pauseKeys(p PauseParams) ([]PauseChange, error) {
	if len(p.Queues) == 0 && !p.All {
		return nil, fmt.Errorf("%w: name CONNECTION:QUEUE pairs, or --all", ErrInvalidInput)
	}
	if p.For < 0 || (p.For > 0 && p.For%time.Second != 0) {
		return nil, fmt.Errorf("%w: the pause duration must be whole seconds, as the cache stores them", ErrInvalidInput)
	}
	var out []PauseChange
	if p.All {
		out = append(out, PauseChange{Queue: allQueuesLabel, Key: AllQueuesPausedKey})
	}
	for _, q := range p.Queues {
		if q.Connection == "" {
			return nil, fmt.Errorf("%w: queue %q needs its connection, as the worker runs it: CONNECTION:QUEUE (for example database:%s)", ErrInvalidInput, q.Queue, q.Queue)
		}
		out = append(out, PauseChange{Queue: q.String(), Key: PausedQueueKey(q)})
	}
	return out, nil
}

// Pause writes the pause keys (or, DryRun, reads what they are now).
func Pause(ctx context.Context, cs CacheStore, p PauseParams) (PauseResult, error) {
	return changePause(ctx, cs, p, true)
}

// Resume deletes the pause keys; --all deletes only the global key, so
// queues paused one by one stay paused, as queue:resume --all leaves them.
func Resume(ctx context.Context, cs CacheStore, p PauseParams) (PauseResult, error) {
	p.For = 0
	return changePause(ctx, cs, p, false)
}

func changePause(ctx context.Context, cs CacheStore, p PauseParams, pause bool) (PauseResult, error) {
	changes, err := pauseKeys(p)
	if err != nil {
		return PauseResult{}, err
	}
	keys := make([]string, len(changes))
	for i, c := range changes {
		keys[i] = c.Key
	}
	present, err := cs.Present(ctx, keys, p.Now)
	if err != nil {
		return PauseResult{}, err
	}
	res := PauseResult{Store: cs.Describe(), DryRun: p.DryRun, Changes: changes}
	if pause && p.For > 0 {
		res.Until = p.Now.Add(p.For)
	}
	for i := range changes {
		changes[i].StoredKey = cs.StoredKey(changes[i].Key)
		changes[i].WasPaused = present[changes[i].Key]
	}
	if p.DryRun {
		return res, nil
	}
	for _, c := range changes {
		if pause {
			err = cs.Put(ctx, c.Key, PausedValue, p.For, p.Now)
		} else {
			err = cs.Forget(ctx, c.Key)
		}
		if err != nil {
			return res, fmt.Errorf("%s %s: %w", map[bool]string{true: "pausing", false: "resuming"}[pause], c.Queue, err)
		}
	}
	return res, nil
}

// PauseState is a queue's state as a worker sees it (All: the global key).
type PauseState struct {
	Paused, All bool
}

// PauseStates reads the state of queues as Worker::getPausedQueues does:
// the global key, then each queue's own (none without a connection).
func PauseStates(ctx context.Context, cs CacheStore, refs []QueueRef, now time.Time) (map[QueueRef]PauseState, error) {
	keys := []string{AllQueuesPausedKey}
	for _, r := range refs {
		if r.Connection != "" {
			keys = append(keys, PausedQueueKey(r))
		}
	}
	present, err := cs.Present(ctx, keys, now)
	if err != nil {
		return nil, err
	}
	all := present[AllQueuesPausedKey]
	out := make(map[QueueRef]PauseState, len(refs))
	for _, r := range refs {
		if r.Connection == "" {
			out[r] = PauseState{}
			continue
		}
		out[r] = PauseState{Paused: all || present[PausedQueueKey(r)], All: all}
	}
	return out, nil
}

// markPaused sets Paused on the report's queues (the default connection's
// when unnamed); an unreadable store says why in PauseError.
func markPaused(ctx context.Context, p MonitorParams, rep *Report) {
	if p.Pauses == nil || len(rep.Queues) == 0 {
		return
	}
	refs := make([]QueueRef, len(rep.Queues))
	for i, q := range rep.Queues {
		refs[i] = QueueRef{Connection: q.Connection, Queue: q.Queue}
		if refs[i].Connection == "" {
			refs[i].Connection = p.DefaultConnection
		}
	}
	states, err := PauseStates(ctx, p.Pauses, refs, p.Now)
	if err != nil {
		rep.PauseError = fmt.Sprintf("pause state unknown (%s): %v", p.Pauses.Describe(), err)
		return
	}
	for i := range rep.Queues {
		rep.Queues[i].Paused = states[refs[i]].Paused
	}
}
