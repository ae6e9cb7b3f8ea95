package triage

import (
	"os"
	"testing"
	"time"
)

func BenchmarkRetryPayload(b *testing.B) {
	raw, err := os.ReadFile("payload/testdata/object_job_redis.json")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Unix(2000, 0)
	for b.Loop() {
		if _, code, reason := RetryPayload(raw, now, time.Hour, true); code != "" {
			b.Fatal(reason)
		}
	}
}
