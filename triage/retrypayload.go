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
func RetryPayload(raw []byte, now time.Time, extend time.Duration, forRedis bool) (payload []byte, code, reason string) {
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
	k := topKeysOf(obj)
	// A worker resolves the handler from "job" (JobName::parse); without it
	// the worker deletes the job without a failure record: lost.
	if k.job.Type != gjson.String || strings.TrimSpace(k.job.String()) == "" {
		return nil, SkipMalformed, `malformed payload: no "job" string naming its handler, so no worker can run it (left in failed_jobs; see show)`
	}
	if forRedis {
		if k.repeated {
			return nil, SkipMalformed, redisRepeatsKey
		}
		if k.id.Exists() && (k.id.Type == gjson.Null || (k.id.Type == gjson.String && k.id.Str == "")) {
			return nil, SkipMalformed, redisEmptyID
		}
	}
	var insert []string // keys a Redis payload must gain, in this order
	if forRedis && !k.id.Exists() {
		// RedisQueue payloads carry an id; Horizon and a retry use the uuid.
		if k.uuid.String() == "" {
			return nil, SkipMalformed, "payload has neither id nor uuid, which a Redis job needs (left in failed_jobs; see show)"
		}
		insert = append(insert, "id")
	}
	if forRedis && !k.attempts.Exists() {
		insert = append(insert, "attempts")
	}
	var edits []valueEdit
	if k.attempts.Exists() && (k.attempts.Type != gjson.Number || k.attempts.Raw != "0") {
		edits = append(edits, valueEdit{at: k.attempts.Index, old: k.attempts.Raw, new: "0"})
	}
	if ru := k.retryUntil; ru.Type == gjson.Number && ru.Int() > 0 && ru.Int() <= now.Unix() {
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
			v = k.uuid.String()
		}
		if out, err = sjson.SetBytes(out, key, v); err != nil {
			return nil, SkipMalformed, "payload " + key + " cannot be set: " + err.Error()
		}
	}
	return out, "", ""
}

const malformedPayload = "malformed payload: not a JSON object (left in failed_jobs; see show)"

// topKeys are the top-level values of a payload that a retry reads;
// repeated says "id" or "attempts" occurs more than once.
type topKeys struct {
	job, id, uuid, attempts, retryUntil gjson.Result
	repeated                            bool
}

// topKeysOf walks obj's top-level keys once, each at its first value.
func topKeysOf(obj gjson.Result) topKeys {
	var k topKeys
	obj.ForEach(func(key, v gjson.Result) bool {
		var dst *gjson.Result
		switch key.Str {
		case "job":
			dst = &k.job
		case "id":
			dst = &k.id
		case "uuid":
			dst = &k.uuid
		case "attempts":
			dst = &k.attempts
		case "retryUntil":
			dst = &k.retryUntil
		default:
			return true
		}
		if !dst.Exists() {
			*dst = v
		} else if dst == &k.id || dst == &k.attempts {
			k.repeated = true
		}
		return true
	})
	return k
}

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
