package notify

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/jobtriage/jobtriage/alerts"
)

// Log writes one plain line per notification (see Line), e.g.
//
//	2026-11-30T12:02:45Z FIRING queue:emails: 3 failures in the last 1m (threshold 3) · App\Jobs\Mail: boom · jobtriage failed --queue emails
//
// It is safe for concurrent use; each digest's lines are written at once.
type Log struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLog writes to w.
func NewLog(w io.Writer) *Log { return &Log{w: w} }

// Name labels the notifier.
func (l *Log) Name() string { return "log" }

// Notify writes the digest's lines.
func (l *Log) Notify(_ context.Context, d alerts.Digest) error {
	var b strings.Builder
	for _, n := range d.Notifications {
		b.WriteString(timestamp(n.At))
		b.WriteByte(' ')
		b.WriteString(Line(n))
		b.WriteByte('\n')
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := io.WriteString(l.w, b.String()); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	return nil
}
