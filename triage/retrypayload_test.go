package triage

import (
	"bytes"
	"testing"
	"time"
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
				got, code, reason := retryPayload([]byte(raw), now, extend, redis)
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
		got, code, reason := retryPayload([]byte(raw), now, d, redis)
		want, wcode, wreason := retryPayloadByName([]byte(raw), now, d, redis)
		if !bytes.Equal(got, want) || code != wcode || reason != wreason {
			t.Fatalf("%q: got %q %q %q, want %q %q %q", raw, got, code, reason, want, wcode, wreason)
		}
	})
}
