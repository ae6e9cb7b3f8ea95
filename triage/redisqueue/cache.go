package redisqueue

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage"
)

// CacheStore is Laravel's Redis cache store (Cache/RedisStore.php) as the
// queue pause keys need it, on the store's Redis connection: keys are the
// connection's client prefix, then the cache prefix, then the key; values
// are serialized PHP (b:1; for true), forever as a plain SET.
type CacheStore struct {
	b      *Backend
	prefix string
}

var _ triage.CacheStore = (*CacheStore)(nil)

// OpenCache connects to the cache store's Redis connection; cachePrefix
// is the cache prefix (o.Prefix stays the connection's client prefix).
func OpenCache(ctx context.Context, o Options, cachePrefix string) (*CacheStore, error) {
	b, err := Open(ctx, o)
	if err != nil {
		return nil, err
	}
	return &CacheStore{b: b, prefix: cachePrefix}, nil
}

// Close closes the connection pool.
func (c *CacheStore) Close() error { return c.b.Close() }

// StoredKey implements triage.CacheStore.
func (c *CacheStore) StoredKey(key string) string { return c.b.opts.Prefix + c.prefix + key }

// Describe implements triage.CacheStore.
func (c *CacheStore) Describe() string { return "redis cache store " + c.b.endpoint }

// falsyValues are serialized values PHP reads as false (RedisStore stores
// numbers raw, so "0" too): a key holding one pauses nothing.
var falsyValues = map[string]bool{"b:0;": true, "N;": true, "i:0;": true, "0": true, `s:0:"";`: true, `s:1:"0";`: true}

// Present implements triage.CacheStore: a key that exists has not expired;
// one GET per key, as the keys need not share a cluster slot.
func (c *CacheStore) Present(ctx context.Context, keys []string, _ time.Time) (map[string]bool, error) {
	out := map[string]bool{}
	for _, k := range keys {
		v, err := c.b.client.Get(ctx, c.StoredKey(k)).Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return nil, c.b.fail(ctx, "reading "+c.StoredKey(k), err)
		case !falsyValues[v]:
			out[k] = true
		}
	}
	return out, nil
}

// Put implements triage.CacheStore: SET, with EX for a timed value
// (RedisStore::put's SETEX), without for forever.
func (c *CacheStore) Put(ctx context.Context, key, value string, ttl time.Duration, _ time.Time) error {
	if err := c.b.client.Set(ctx, c.StoredKey(key), value, ttl.Truncate(time.Second)).Err(); err != nil {
		return c.b.fail(ctx, "writing "+c.StoredKey(key), err)
	}
	return nil
}

// Forget implements triage.CacheStore.
func (c *CacheStore) Forget(ctx context.Context, key string) error {
	if err := c.b.client.Del(ctx, c.StoredKey(key)).Err(); err != nil {
		return c.b.fail(ctx, "deleting "+c.StoredKey(key), err)
	}
	return nil
}
