package signature

import (
	"fmt"
	"strings"
	"testing"
)

func TestCacheReturnsNormalize(t *testing.T) {
	c := NewCache(2)
	msgs := []string{"Order 1 not found", "Order 2 not found", "Order 1 not found", "x 0x1F", "", "Order 2 not found"}
	for _, m := range msgs {
		if got, want := c.Normalize(m), Normalize(m); got != want {
			t.Errorf("Cache.Normalize(%q) = %q, want %q", m, got, want)
		}
		if len(c.entries) > 2 {
			t.Fatalf("cache holds %d entries, size is 2", len(c.entries))
		}
	}
}

func TestCacheHitsAndBound(t *testing.T) {
	c := NewCache(100)
	for i := range 1000 {
		c.Normalize(fmt.Sprintf("Order %d not found", i))
		if len(c.entries) > 100 {
			t.Fatalf("cache grew to %d entries", len(c.entries))
		}
	}
	c = NewCache(0) // clamped to 1
	c.Normalize("a 1")
	if len(c.entries) != 1 {
		t.Errorf("size 0 cache holds %d entries, want 1", len(c.entries))
	}
}

// Messages that differ only past MaxMessageBytes normalise alike, so they
// share an entry, and the entry keeps no more than the clipped text.
func TestCacheKeysOnClippedText(t *testing.T) {
	c := NewCache(10)
	head := strings.Repeat("a", MaxMessageBytes)
	c.Normalize(head + " tail one")
	c.Normalize(head + " tail two")
	if len(c.entries) != 1 {
		t.Errorf("got %d entries for one clipped text", len(c.entries))
	}
	for k := range c.entries {
		if len(k) != MaxMessageBytes {
			t.Errorf("key of %d bytes", len(k))
		}
	}
}

func BenchmarkCacheHit(b *testing.B) {
	c := NewCache(1024)
	msg := benchMessages[1].msg
	c.Normalize(msg)
	for b.Loop() {
		c.Normalize(msg)
	}
}
