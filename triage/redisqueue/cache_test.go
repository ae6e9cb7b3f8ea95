package redisqueue

import (
	"context"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// TestCacheStoreWritesRedisStoreKeys: against a real Redis, the keys are
// client prefix + cache prefix + key with b:1;, forever without a TTL,
// timed with EX; a value artisan wrote reads as paused; Forget deletes.
func TestCacheStoreWritesRedisStoreKeys(t *testing.T) {
	b := openTest(t)
	ctx := context.Background()
	cs := &CacheStore{b: b, prefix: "harness-13-cache-"}
	key := triage.PausedQueueKey(triage.QueueRef{Connection: "redis", Queue: "emails"})
	stored := b.opts.Prefix + "harness-13-cache-" + key
	if cs.StoredKey(key) != stored {
		t.Fatalf("stored key %q", cs.StoredKey(key))
	}
	now := time.Now()
	if err := cs.Put(ctx, key, triage.PausedValue, 0, now); err != nil {
		t.Fatal(err)
	}
	if v, err := b.client.Get(ctx, stored).Result(); err != nil || v != "b:1;" {
		t.Errorf("value %q %v", v, err)
	}
	if ttl := b.client.TTL(ctx, stored).Val(); ttl != -1 {
		t.Errorf("forever key has TTL %s", ttl)
	}
	if err := cs.Put(ctx, key, triage.PausedValue, 90*time.Second, now); err != nil {
		t.Fatal(err)
	}
	if ttl := b.client.TTL(ctx, stored).Val(); ttl <= 80*time.Second || ttl > 90*time.Second {
		t.Errorf("timed key TTL %s, want 90s", ttl)
	}
	got, err := cs.Present(ctx, []string{key, triage.AllQueuesPausedKey}, now)
	if err != nil || !got[key] || got[triage.AllQueuesPausedKey] {
		t.Errorf("present %v %v", got, err)
	}
	// What artisan's RedisStore writes for pauseAll, and a false value.
	b.client.Set(ctx, b.opts.Prefix+"harness-13-cache-"+triage.AllQueuesPausedKey, "b:1;", 0)
	if got, _ := cs.Present(ctx, []string{triage.AllQueuesPausedKey}, now); !got[triage.AllQueuesPausedKey] {
		t.Error("artisan's global key not read")
	}
	b.client.Set(ctx, stored, "b:0;", 0)
	if got, _ := cs.Present(ctx, []string{key}, now); got[key] {
		t.Error("b:0; reads as paused")
	}
	if err := cs.Forget(ctx, key); err != nil {
		t.Fatal(err)
	}
	if n := b.client.Exists(ctx, stored).Val(); n != 0 {
		t.Errorf("key left after Forget")
	}
}
