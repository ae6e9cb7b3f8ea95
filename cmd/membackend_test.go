package cmd

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// memBackend is an in-memory triage.QueueBackend: Push queues each move once
// by uuid, or fails with Err without queueing anything.
type memBackend struct {
	Name string
	Err  error

	mu     sync.Mutex
	queued []triage.Move
	seen   map[string]bool
}

func (b *memBackend) Describe() string { return b.Name }

func (b *memBackend) Push(ctx context.Context, moves []triage.Move, _ time.Time) (triage.PushResult, error) {
	if err := ctx.Err(); err != nil {
		return triage.PushResult{}, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.Err != nil {
		return triage.PushResult{}, b.Err
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	var res triage.PushResult
	for _, m := range moves {
		if m.UUID != "" && b.seen[m.UUID] {
			res.Already++
			continue
		}
		if m.UUID != "" {
			b.seen[m.UUID] = true
		}
		b.queued = append(b.queued, m)
		res.Pushed++
	}
	return res, nil
}

// Queued are the moves pushed so far, in order.
func (b *memBackend) Queued() []triage.Move {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.queued)
}

func (b *memBackend) Stats(context.Context, triage.QueueStatsParams) ([]triage.QueueStats, error) {
	return nil, nil
}

func (b *memBackend) Close() error { return nil }
