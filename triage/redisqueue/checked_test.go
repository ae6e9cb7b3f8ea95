package redisqueue

import (
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// checkedSeeds are payloads a Redis retry meets: as RedisQueue writes them,
// and with what checkPayload refuses (no id, a null or empty one, a
// non-numeric attempts, repeated keys, not an object).
var checkedSeeds = []string{
	`{"uuid":"u1","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:1:\"X\":0:{}"},"id":"abc","attempts":2}`,
	`{"uuid":"u1","job":"J@handle"}`,
	`{"uuid":"u1","job":"J@handle","id":null,"attempts":1}`,
	`{"uuid":"u1","job":"J@handle","id":"","attempts":1}`,
	`{"uuid":"u1","job":"J@handle","id":"a","attempts":"2"}`,
	`{"uuid":"u1","job":"J@handle","id":"a","attempts":1,"attempts":"x"}`,
	`{"uuid":"u1","job":"J@handle","id":"a","\u0069d":null,"attempts":1}`,
	`{"job":"J@handle","attempts":1}`,
	`[1]`, `{"job":`,
}

// The promise behind triage.Move.RedisChecked: whatever payload
// triage.RetryPayload returns for a Redis job is one checkPayload accepts,
// so Push may skip the check for it.
func TestRedisRetryPayloadPassesCheck(t *testing.T) {
	pushed := 0
	for _, raw := range checkedSeeds {
		if redisPayloadChecked(t, raw) {
			pushed++
		}
	}
	if pushed == 0 || pushed == len(checkedSeeds) {
		t.Fatalf("%d of %d seeds were made pushable: the test proves nothing", pushed, len(checkedSeeds))
	}
}

func FuzzRedisRetryPayloadPassesCheck(f *testing.F) {
	for _, s := range checkedSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) { redisPayloadChecked(t, raw) })
}

// redisPayloadChecked reports whether the retry made raw pushable, and
// fails t when checkPayload refuses what it made.
func redisPayloadChecked(t *testing.T, raw string) bool {
	t.Helper()
	out, code, reason := triage.RetryPayload([]byte(raw), time.Unix(2000, 0), time.Hour, true)
	if code != "" || reason != "" {
		return false
	}
	if err := checkPayload(out); err != nil {
		t.Fatalf("%q: the retry made %q for Redis, which checkPayload refuses: %v", raw, out, err)
	}
	return true
}
