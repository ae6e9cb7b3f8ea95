package alerts

import (
	"math"
	"strings"
	"testing"
	"time"
)

// at is second s of a fixed day, so tests read like the seed's "seconds
// since the worker started".
func at(s int) time.Time {
	return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(s) * time.Second)
}

func mustWindow(t *testing.T, width time.Duration) *Window {
	t.Helper()
	w, err := NewWindow(width)
	if err != nil {
		t.Fatalf("NewWindow(%s): %v", width, err)
	}
	return w
}

// The seed (004, "Peringatan untuk Manusia"): failures at 100, 103, 105, 140
// and 160, now 165, threshold 3: a 30 s window counts 2, a 60 s window 3.
func TestWindowSeedVector(t *testing.T) {
	for _, tt := range []struct {
		width time.Duration
		want  int
	}{
		{30 * time.Second, 2},
		{60 * time.Second, 3}, // 105 is exactly now−60: inclusive
		{59 * time.Second, 2},
		{65 * time.Second, 5},
		{64 * time.Second, 4},
	} {
		w := mustWindow(t, tt.width)
		for _, s := range []int{100, 103, 105, 140, 160} {
			w.Add(at(s))
		}
		if got := w.Count(at(165)); got != tt.want {
			t.Errorf("width %s: Count = %d, want %d", tt.width, got, tt.want)
		}
	}
}

func TestWindowBoundariesInclusive(t *testing.T) {
	w := mustWindow(t, 10*time.Second)
	w.Add(at(100))
	for _, tt := range []struct {
		now  int
		want int
	}{
		{100, 1}, // now − t = 0
		{110, 1}, // now − t = width: still counts
		{111, 0}, // one second later it is gone
	} {
		if got := w.Count(at(tt.now)); got != tt.want {
			t.Errorf("Count(%d) = %d, want %d", tt.now, got, tt.want)
		}
	}
}

// Laravel's failed_at has whole seconds; fractions fall into their second.
func TestWindowTruncatesToSeconds(t *testing.T) {
	w := mustWindow(t, 10*time.Second)
	w.Add(at(100).Add(900 * time.Millisecond))
	if got := w.Count(at(110).Add(999 * time.Millisecond)); got != 1 {
		t.Errorf("Count = %d, want 1", got)
	}
	if got := w.Count(at(111)); got != 0 {
		t.Errorf("Count = %d, want 0", got)
	}
}

func TestWindowOutOfOrderAdds(t *testing.T) {
	w := mustWindow(t, 60*time.Second)
	for _, s := range []int{160, 105, 140, 100, 103, 160, 120} {
		w.Add(at(s))
	}
	if got := w.Count(at(165)); got != 5 { // 105, 120, 140, 160, 160
		t.Errorf("Count = %d, want 5", got)
	}
	// Late, but still within the window: counts.
	w.Add(at(110))
	if got := w.Count(at(165)); got != 6 {
		t.Errorf("after a late add in the window: Count = %d, want 6", got)
	}
	// Older than what Count already evicted: can never count again.
	w.Add(at(101))
	if got := w.Count(at(165)); got != 6 {
		t.Errorf("after an add behind the horizon: Count = %d, want 6", got)
	}
}

func TestWindowFutureFailuresCount(t *testing.T) {
	w := mustWindow(t, 30*time.Second)
	w.Add(at(200)) // clock skew: stamped after now
	if got := w.Count(at(165)); got != 1 {
		t.Errorf("Count = %d, want 1", got)
	}
}

func TestWindowBurstCostsOneBucket(t *testing.T) {
	w := mustWindow(t, time.Minute)
	for i := range 1_000_000 {
		w.Add(at(10).Add(time.Duration(i) * time.Nanosecond))
	}
	if got := w.held(); got != 1 {
		t.Errorf("buckets = %d after a one-second burst, want 1", got)
	}
	if got := w.Count(at(20)); got != 1_000_000 {
		t.Errorf("Count = %d, want 1000000", got)
	}
}

func TestWindowMemoryBoundedByWidth(t *testing.T) {
	w := mustWindow(t, 10*time.Second)
	// A failure every second for an hour, never counted in between.
	for s := range 3600 {
		w.Add(at(s))
	}
	if got := w.held(); got > 11 {
		t.Errorf("buckets = %d, want at most width+1 = 11", got)
	}
	if got := w.Count(at(3599)); got != 11 {
		t.Errorf("Count = %d, want 11", got)
	}
	// Counting evicts everything once the window has moved past it.
	if got := w.Count(at(5000)); got != 0 {
		t.Errorf("Count = %d, want 0", got)
	}
	if got := w.held(); got != 0 {
		t.Errorf("buckets = %d after eviction, want 0", got)
	}
	if cap(w.buckets) > 64 {
		t.Errorf("backing array grew to %d buckets", cap(w.buckets))
	}
}

func TestNewWindowRejectsBadWidths(t *testing.T) {
	for _, tt := range []struct {
		width time.Duration
		want  string
	}{
		{0, "too short"},
		{-time.Second, "too short"},
		{500 * time.Millisecond, "too short"},
		{1500 * time.Millisecond, "whole number of seconds"},
		{MaxWindow + time.Second, "too long"},
	} {
		_, err := NewWindow(tt.width)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("NewWindow(%s) error = %v, want it to mention %q", tt.width, err, tt.want)
		}
	}
	if _, err := NewWindow(MaxWindow); err != nil {
		t.Errorf("NewWindow(MaxWindow): %v", err)
	}
}

func TestWindowExtremeTimesDoNotPanic(t *testing.T) {
	w := mustWindow(t, time.Minute)
	w.Add(time.Unix(math.MaxInt64, 0))
	w.Add(time.Unix(math.MinInt64, 0))
	w.Add(time.Time{})
	if got := w.Count(time.Unix(math.MinInt64, 0)); got != 3 {
		t.Errorf("Count at the earliest time = %d, want 3", got)
	}
	if got := w.Count(time.Unix(math.MaxInt64, 0)); got != 1 {
		t.Errorf("Count at the latest time = %d, want 1", got)
	}
}

// held is how many per-second buckets the window holds now: its memory.
func (w *Window) held() int { return len(w.buckets) }
