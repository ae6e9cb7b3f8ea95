package triage

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"

	"github.com/jobtriage/jobtriage/triage/payload"
)

// Why a Redis job's payload stays in failed_jobs (see RetryPayload).
const (
	redisEmptyID    = `payload "id" is null or empty, which a Redis job needs (left in failed_jobs; see show)`
	redisRepeatsKey = `payload repeats "id" or "attempts" at its top level: a retry would reset the first, Redis's pop script reads the last (left in failed_jobs; see show)`
)

// RetryPayload returns the payload a retried job is pushed with, or why it
// must not be pushed. Only the keys that must change are touched — every
// other byte, data.command above all, stays as Laravel wrote it:
//   - "attempts" is reset to 0 where the payload carries it (Redis; the
//     database driver keeps attempts in a column);
//   - an expired "retryUntil" would fail the job at once, so the job is
//     skipped unless extend gives it a new deadline of now+extend.
//
// forRedis also adds "attempts":0 where it lacks (Redis's pop script loses
// a job without it; queue-spec §6.2) and refuses an "id" null or empty, or
// a repeated "id" or "attempts" (a retry edits the first, cjson reads the
// last): what it returns is what Move.RedisChecked promises.
func RetryPayload(raw []byte, now time.Time, extend time.Duration, forRedis bool) (body []byte, code, reason string) {
	if !gjson.ValidBytes(raw) {
		return nil, SkipMalformed, malformedPayload
	}
	// The walk reads raw in place, not a copy (2 KB of garbage per job): raw
	// is never written, and nothing that leaves here is a view of it.
	obj := gjson.Parse(unsafe.String(unsafe.SliceData(raw), len(raw)))
	if !obj.IsObject() {
		return nil, SkipMalformed, malformedPayload
	}
	// One walk over the top-level keys finds each key a retry reads at its
	// first occurrence; the edits replace values at the offsets it found.
	k := payload.ReadTopKeys(obj, payload.TopKeys{{Key: "job"}, {Key: "id"}, {Key: "uuid"}, {Key: "attempts"}, {Key: "retryUntil"}})
	job, id, uuid, attempts, ru := k[0].First, k[1], k[2].First, k[3], k[4].First
	// A worker resolves the handler from "job" (JobName::parse); without it
	// the worker deletes the job without a failure record: lost.
	if job.Type != gjson.String || strings.TrimSpace(job.String()) == "" {
		return nil, SkipMalformed, `malformed payload: no "job" string naming its handler, so no worker can run it (left in failed_jobs; see show)`
	}
	if forRedis {
		if id.N > 1 || attempts.N > 1 {
			return nil, SkipMalformed, redisRepeatsKey
		}
		if id.N > 0 && (id.First.Type == gjson.Null || (id.First.Type == gjson.String && id.First.Str == "")) {
			return nil, SkipMalformed, redisEmptyID
		}
	}
	var insert []string // keys a Redis payload must gain, in this order
	if forRedis && id.N == 0 {
		// RedisQueue payloads carry an id; Horizon and a retry use the uuid.
		if uuid.String() == "" {
			return nil, SkipMalformed, "payload has neither id nor uuid, which a Redis job needs (left in failed_jobs; see show)"
		}
		insert = append(insert, "id")
	}
	if forRedis && attempts.N == 0 {
		insert = append(insert, "attempts")
	}
	var edits []valueEdit
	if a := attempts.First; attempts.N > 0 && (a.Type != gjson.Number || a.Raw != "0") {
		edits = append(edits, valueEdit{at: a.Index, old: a.Raw, new: "0"})
	}
	if ru.Type == gjson.Number && ru.Int() > 0 && ru.Int() <= now.Unix() {
		if extend <= 0 {
			return nil, SkipRetryUntil, fmt.Sprintf("retryUntil passed at %s: the worker would fail it at once "+
				"(MaxAttemptsExceededException); --retry-until gives it a new deadline",
				time.Unix(ru.Int(), 0).UTC().Format(time.RFC3339))
		}
		edits = append(edits, valueEdit{at: ru.Index, old: ru.Raw, new: strconv.FormatInt(now.Add(extend).Unix(), 10)})
	}
	out := applyEdits(raw, edits)
	var err error
	for _, key := range insert {
		var v any = 0
		if key == "id" {
			v = uuid.String()
		}
		if out, err = sjson.SetBytes(out, key, v); err != nil {
			return nil, SkipMalformed, "payload " + key + " cannot be set: " + err.Error()
		}
	}
	return out, "", ""
}

const malformedPayload = "malformed payload: not a JSON object (left in failed_jobs; see show)"

// valueEdit replaces the value old found at offset at with new.
type valueEdit struct {
	at       int
	old, new string
}

// applyEdits returns raw with the edits (one per key: they never overlap) in
// a new slice, raw when none; FuzzRetryPayloadOneWalk holds it to one by name.
func applyEdits(raw []byte, edits []valueEdit) []byte {
	if len(edits) == 0 {
		return raw
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	out := make([]byte, 0, len(raw)+16)
	pos := 0
	for _, e := range edits {
		out = append(append(out, raw[pos:e.at]...), e.new...)
		pos = e.at + len(e.old)
	}
	return append(out, raw[pos:]...)
}
