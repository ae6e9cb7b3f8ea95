package signature

import "strings"

// Cache remembers the Normalize output of recent messages. Folding a whole
// failed_jobs table meets the same text again and again ("… has timed
// out.", "Connection refused", one outage's identical errors), and a map
// lookup costs a small fraction of normalising; messages that carry unique
// ids miss every time and pay for an insert on top. Use one Cache per pass
// over many rows; for a few messages call Normalize directly.
//
// A Cache holds at most its size in entries and forgets them all when full,
// so memory stays bounded whatever the table holds. Only the first
// MaxMessageBytes of a message are kept, as only they decide the result. A
// Cache is not safe for concurrent use.
type Cache struct {
	size    int
	entries map[string]string
}

// NewCache returns a Cache of at most size entries (at least 1).
func NewCache(size int) *Cache {
	size = max(size, 1)
	return &Cache{size: size, entries: make(map[string]string, min(size, 1024))}
}

// Normalize returns Normalize(message), from the cache when it can.
func (c *Cache) Normalize(message string) string {
	key := clip(message, MaxMessageBytes)
	if n, ok := c.entries[key]; ok {
		return n
	}
	n := Normalize(message)
	if len(c.entries) >= c.size {
		clear(c.entries)
	}
	// Clone: the key must not pin a long message's tail in memory.
	c.entries[strings.Clone(key)] = n
	return n
}
