package triage_test

import (
	"context"
	"sync"
	"time"
)

// memCache is an in-memory triage.CacheStore with Laravel's semantics:
// a key counts until its expiry (none for forever), and a value counts
// only when PHP reads it as true.
type memCache struct {
	// Prefix is the cache prefix StoredKey adds.
	Prefix string
	// Err, when set, fails every call.
	Err error

	mu      sync.Mutex
	entries map[string]cacheEntry
}

// cacheEntry is one stored value; Expires is zero for forever.
type cacheEntry struct {
	Value   string
	Expires time.Time
}

// Present implements triage.CacheStore.
func (c *memCache) Present(_ context.Context, keys []string, now time.Time) (map[string]bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err != nil {
		return nil, c.Err
	}
	out := map[string]bool{}
	for _, k := range keys {
		e, ok := c.entries[k]
		if ok && (e.Expires.IsZero() || e.Expires.After(now)) && e.Value != "b:0;" && e.Value != "N;" {
			out[k] = true
		}
	}
	return out, nil
}

// Put implements triage.CacheStore.
func (c *memCache) Put(_ context.Context, key, value string, ttl time.Duration, now time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err != nil {
		return c.Err
	}
	if c.entries == nil {
		c.entries = map[string]cacheEntry{}
	}
	e := cacheEntry{Value: value}
	if ttl > 0 {
		e.Expires = now.Add(ttl)
	}
	c.entries[key] = e
	return nil
}

// Forget implements triage.CacheStore.
func (c *memCache) Forget(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Err != nil {
		return c.Err
	}
	delete(c.entries, key)
	return nil
}

// StoredKey implements triage.CacheStore.
func (c *memCache) StoredKey(key string) string { return c.Prefix + key }

// Describe implements triage.CacheStore.
func (c *memCache) Describe() string { return "triagetest cache" }

// Entries is a copy of what is stored, by logical key.
func (c *memCache) Entries() map[string]cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]cacheEntry, len(c.entries))
	for k, v := range c.entries {
		out[k] = v
	}
	return out
}
