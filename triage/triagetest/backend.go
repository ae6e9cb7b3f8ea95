package triagetest

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// Backend is an in-memory triage.QueueBackend: Push queues each move once
// by uuid (a uuid pushed before is counted as Already, as the contract in
// triage/backendtest requires), Stats counts what was pushed as pending.
type Backend struct {
	Name string
	// Err, when set, fails every Push without queueing anything.
	Err error

	mu     sync.Mutex
	queued []triage.Move
	seen   map[string]bool
}

// Describe implements triage.QueueBackend.
func (b *Backend) Describe() string {
	if b.Name == "" {
		return "triagetest backend"
	}
	return b.Name
}

// Push implements triage.QueueBackend.
func (b *Backend) Push(ctx context.Context, moves []triage.Move, _ time.Time) (triage.PushResult, error) {
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
func (b *Backend) Queued() []triage.Move {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.queued)
}

// Stats implements triage.QueueBackend: every pushed job is pending; the
// asked-for queues are reported, with zero counts where empty.
func (b *Backend) Stats(ctx context.Context, p triage.QueueStatsParams) ([]triage.QueueStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := map[string]int64{}
	for _, m := range b.queued {
		counts[m.Queue]++
	}
	queues := p.Queues
	if len(queues) == 0 {
		for q := range counts {
			queues = append(queues, q)
		}
	}
	slices.Sort(queues)
	var out []triage.QueueStats
	for _, q := range queues {
		out = append(out, triage.QueueStats{Queue: q, Size: counts[q], Pending: counts[q]})
	}
	return out, nil
}

// Close implements triage.QueueBackend.
func (b *Backend) Close() error { return nil }

var _ triage.QueueBackend = (*Backend)(nil)
