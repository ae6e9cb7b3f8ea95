package triage

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// retryPayloadSeeds are payloads whose keys sit where Laravel and Redis put
// them, and where they should not be: repeated, escaped, nested, missing.
var retryPayloadSeeds = []string{
	`{"uuid":"u1","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"attempts":5},"id":"x","attempts":3}`,
	`{"uuid":"u1","job":"J@handle","attempts":0}`,
	`{"uuid":"u1","job":"J@handle","attempts":"2"}`,
	`{"uuid":"u1","job":"J@handle","attempts":2.5,"retryUntil":1000}`,
	`{"uuid":"u1","job":"J@handle","retryUntil":1000,"attempts":1,"attempts":7}`,
	`{"job":"J@handle","retryUntil":4102444800}`,
	`{"uuid":"","job":"J@handle"}`,
	`{"uuid":"u2","job":"J@handle"}`,
	` {"uuid":"u2", "job" : "J@handle" , "attempts" : 12 , "retryUntil" : 99 } `,
	`{"uuid":"u\"3","j\u006fb":"J@handle","\u0061ttempts":4,"id":null}`,
	`{"uuid":"u1","job":"  ","attempts":1}`,
	`{"uuid":"u1","job":"J@handle","retryUntil":-5,"attempts":1}`,
	`{"uuid":"u1","job":"J@handle","retryUntil":"100","attempts":1}`,
	`{"uuid":"u1","job":"J@handle","id":"","attempts":1}`,
	`{"uuid":"u1","job":"J@handle","id":"a","attempts":1,"\u0069d":"b"}`,
	`{"uuid":"u1","job":"J@handle","attempts":1,"id":7,"attempts":"x"}`,
	`[1,2]`, `{"job":`, ``, `null`, `{}`,
}

// TestRetryPayloadOneWalk: the one-walk edit gives the same bytes, skip
// code and reason as looking every key up and editing it by name.
func TestRetryPayloadOneWalk(t *testing.T) {
	now := time.Unix(2000, 0)
	changed := 0
	for _, raw := range retryPayloadSeeds {
		for _, redis := range []bool{false, true} {
			for _, extend := range []time.Duration{0, time.Hour} {
				got, code, reason := RetryPayload([]byte(raw), now, extend, redis)
				want, wcode, wreason := retryPayloadByName([]byte(raw), now, extend, redis)
				if !bytes.Equal(got, want) || code != wcode || reason != wreason {
					t.Errorf("%s (redis %v, extend %v):\n got %q %q %q\nwant %q %q %q", raw, redis, extend, got, code, reason, want, wcode, wreason)
				}
				if code == "" && !bytes.Equal(got, []byte(raw)) {
					changed++
				}
			}
		}
	}
	if changed == 0 {
		t.Fatal("no seed was edited: the comparison proves nothing")
	}
}

func FuzzRetryPayloadOneWalk(f *testing.F) {
	for _, s := range retryPayloadSeeds {
		f.Add(s, true, int64(3600))
	}
	now := time.Unix(2000, 0)
	f.Fuzz(func(t *testing.T, raw string, redis bool, extend int64) {
		d := time.Duration(extend) * time.Second
		got, code, reason := RetryPayload([]byte(raw), now, d, redis)
		want, wcode, wreason := retryPayloadByName([]byte(raw), now, d, redis)
		if !bytes.Equal(got, want) || code != wcode || reason != wreason {
			t.Fatalf("%q: got %q %q %q, want %q %q %q", raw, got, code, reason, want, wcode, wreason)
		}
	})
}

// retryPayloadByName is the reference editor retryPayload must agree
// with: every key looked up and edited by name (gjson, sjson), not found in
// one walk and edited at its offset.
func retryPayloadByName(raw []byte, now time.Time, extend time.Duration, forRedis bool) (payload []byte, code, reason string) {
	if !gjson.ValidBytes(raw) || !gjson.ParseBytes(raw).IsObject() {
		return nil, SkipMalformed, malformedPayload
	}
	if j := gjson.GetBytes(raw, "job"); j.Type != gjson.String || strings.TrimSpace(j.String()) == "" {
		return nil, SkipMalformed, `malformed payload: no "job" string naming its handler, so no worker can run it (left in failed_jobs; see show)`
	}
	if forRedis {
		counts := map[string]int{}
		gjson.ParseBytes(raw).ForEach(func(k, _ gjson.Result) bool {
			counts[k.Str]++
			return true
		})
		if counts["id"] > 1 || counts["attempts"] > 1 {
			return nil, SkipMalformed, redisRepeatsKey
		}
		if id := gjson.GetBytes(raw, "id"); id.Exists() && (id.Type == gjson.Null || (id.Type == gjson.String && id.Str == "")) {
			return nil, SkipMalformed, redisEmptyID
		}
	}
	out := raw
	var err error
	if forRedis && !gjson.GetBytes(raw, "id").Exists() {
		u := gjson.GetBytes(raw, "uuid").String()
		if u == "" {
			return nil, SkipMalformed, "payload has neither id nor uuid, which a Redis job needs (left in failed_jobs; see show)"
		}
		if out, err = sjson.SetBytes(out, "id", u); err != nil {
			return nil, SkipMalformed, "payload id cannot be set: " + err.Error()
		}
	}
	if a := gjson.GetBytes(raw, "attempts"); a.Exists() || forRedis {
		if a.Exists() && a.Type == gjson.Number && a.Raw == "0" {
			// already 0: keep the bytes
		} else if out, err = sjson.SetBytes(out, "attempts", 0); err != nil {
			return nil, SkipMalformed, "payload attempts cannot be reset: " + err.Error()
		}
	}
	ru := gjson.GetBytes(raw, "retryUntil")
	if ru.Type == gjson.Number && ru.Int() > 0 && ru.Int() <= now.Unix() {
		if extend <= 0 {
			return nil, SkipRetryUntil, fmt.Sprintf("retryUntil passed at %s: the worker would fail it at once "+
				"(MaxAttemptsExceededException); --retry-until gives it a new deadline",
				time.Unix(ru.Int(), 0).UTC().Format(time.RFC3339))
		}
		if out, err = sjson.SetBytes(out, "retryUntil", now.Add(extend).Unix()); err != nil {
			return nil, SkipMalformed, "payload retryUntil cannot be set: " + err.Error()
		}
	}
	return out, "", ""
}
