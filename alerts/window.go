// Package alerts turns failed-job times into alerts: a sliding-window failure
// counter, alert rules with a per-key state machine (ok → pending → firing →
// resolved), and the notifications those transitions produce, which a
// watcher sends as one digest per evaluation. It is pure: every "now" is
// passed in, nothing here sleeps, reads a clock or touches SQL. Sending
// lives in alerts/notify.
package alerts

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// MaxWindow bounds a window's width. A window holds at most one bucket per
// second of its width, so this caps a window's memory (about 10 MB when every
// second of a week saw a failure) whatever the database feeds it.
const MaxWindow = 7 * 24 * time.Hour

// bucket counts the failures of one whole second.
type bucket struct {
	sec   int64 // Unix seconds
	count int
}

// Window counts failures over a sliding window of whole seconds.
//
// Times are truncated to the second: Laravel writes failed_at with second
// precision, so finer resolution would only be noise. A failure at t counts
// at now when now − t ≤ width, boundaries inclusive, exactly as
// `$now - $t <= $window` does; a failure stamped after now (clock skew
// between the app and the watcher) also counts, so skew never hides one.
//
// Memory is one bucket per distinct second, at most width+1 buckets: a burst
// of a million failures in one second costs one bucket. Count evicts buckets
// that fell out of the window and remembers that horizon, so a later Add older
// than it is dropped (it could never count again while now moves forward).
// Adds may arrive out of order within the window. As an Evaluator, it is
// not safe for concurrent use.
type Window struct {
	width      int64    // seconds
	buckets    []bucket // sorted by sec
	horizon    int64    // adds before this second are dropped
	hasHorizon bool
}

// NewWindow returns an empty window width wide. The width must be a whole
// number of seconds between one second and MaxWindow.
func NewWindow(width time.Duration) (*Window, error) {
	if err := checkWidth(width); err != nil {
		return nil, err
	}
	return &Window{width: int64(width / time.Second)}, nil
}

func checkWidth(width time.Duration) error {
	switch {
	case width < time.Second:
		return fmt.Errorf("window %s is too short: it must be at least 1s", width)
	case width > MaxWindow:
		return fmt.Errorf("window %s is too long: it must be at most %s", width, MaxWindow)
	case width%time.Second != 0:
		return errors.New("window " + width.String() + " is not a whole number of seconds")
	}
	return nil
}

// Add records one failure at t.
func (w *Window) Add(t time.Time) {
	sec := t.Unix()
	if w.hasHorizon && sec < w.horizon {
		return
	}
	b := w.buckets
	i := sort.Search(len(b), func(i int) bool { return b[i].sec >= sec })
	if i < len(b) && b[i].sec == sec {
		b[i].count++
		return
	}
	if int64(len(b)) > w.width {
		// Full: width+1 distinct seconds already. Any window [now−width, now]
		// holds at most width+1 seconds, so one of the extremes is out of
		// it; drop the oldest one, which is the new time if that is oldest.
		if i == 0 {
			return
		}
		b, i = b[1:], i-1
	}
	// Dropping from the front shrinks the capacity too, so the array is
	// reallocated with only the live buckets before the dead ones outgrow
	// them.
	w.buckets = slices.Insert(b, i, bucket{sec: sec, count: 1})
}

// Count is the number of failures within the window at now (now − t ≤
// width). It evicts what fell out of the window.
func (w *Window) Count(now time.Time) int {
	cutoff := now.Unix()
	if cutoff >= math.MinInt64+w.width { // time.Time reaches past int64 seconds at its extremes
		cutoff -= w.width
	}
	if !w.hasHorizon || cutoff > w.horizon {
		w.horizon, w.hasHorizon = cutoff, true
	}
	i := 0
	for i < len(w.buckets) && w.buckets[i].sec < cutoff {
		i++
	}
	w.buckets = w.buckets[i:]
	total := 0
	for _, b := range w.buckets {
		total += b.count
	}
	return total
}
