package redisqueue

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/redis/go-redis/v9"
	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
)

// stateChunk bounds one read of a JobStates call, so replies stay small.
const stateChunk = 1000

var _ triage.JobStateReader = (*Backend)(nil)

// JobStates finds the given uuids (none: every one) in each queue's :reserved (running),
// :delayed and list (waiting), in that order, the list from its newest end,
// stateChunk at a time and at most triage.MaxJobStateScan per queue (more
// makes the answer Partial).
func (b *Backend) JobStates(ctx context.Context, p triage.JobStatesParams) (triage.JobStates, error) {
	out := triage.JobStates{ByUUID: map[string]triage.JobState{}}
	for _, q := range slices.Sorted(maps.Keys(p.UUIDs)) {
		want := map[string]bool{}
		for _, u := range p.UUIDs[q] {
			want[u] = true
		}
		partial, err := b.statesOn(ctx, q, want, out.ByUUID)
		if err != nil {
			return out, b.fail(ctx, "reading queue "+q, err)
		}
		out.Partial = out.Partial || partial
	}
	return out, nil
}

func (b *Backend) statesOn(ctx context.Context, queue string, want map[string]bool, into map[string]triage.JobState) (bool, error) {
	k := b.QueueKey(queue)
	pipe := b.client.Pipeline()
	nReserved := pipe.ZCard(ctx, k+reservedSuffix)
	nDelayed := pipe.ZCard(ctx, k+delayedSuffix)
	nList := pipe.LLen(ctx, k)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return false, err
	}
	budget := int64(triage.MaxJobStateScan)
	note := func(payloads []string, st triage.JobState) {
		for _, raw := range payloads {
			u := gjson.Get(raw, "uuid").String()
			if u != "" && (len(want) == 0 || want[u]) {
				if _, seen := into[u]; !seen || st == triage.JobRunning {
					into[u] = st
				}
			}
		}
	}
	// read reads n members in chunks from offset 0 up, within the budget.
	read := func(n int64, st triage.JobState, get func(start, stop int64) *redis.StringSliceCmd) error {
		for start := int64(0); start < n && budget > 0; start += stateChunk {
			got, err := get(start, min(start+stateChunk, start+budget, n)-1).Result()
			if err != nil {
				return err
			}
			budget -= int64(len(got))
			note(got, st)
			if len(got) == 0 {
				break
			}
		}
		return nil
	}
	zset := func(key string) func(start, stop int64) *redis.StringSliceCmd {
		return func(start, stop int64) *redis.StringSliceCmd { return b.client.ZRange(ctx, key, start, stop) }
	}
	n := nList.Val()
	err := read(nReserved.Val(), triage.JobRunning, zset(k+reservedSuffix))
	if err == nil {
		err = read(nDelayed.Val(), triage.JobWaiting, zset(k+delayedSuffix))
	}
	if err == nil {
		// The list from its newest (right) end: retried jobs are the newest.
		err = read(n, triage.JobWaiting, func(start, stop int64) *redis.StringSliceCmd {
			return b.client.LRange(ctx, k, -1-stop, -1-start)
		})
	}
	return nReserved.Val()+nDelayed.Val()+n > triage.MaxJobStateScan, err
}
