package notify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/jobtriage/jobtriage/alerts"
)

// Dispatcher defaults. DefaultMaxRetryAfter caps a server's Retry-After,
// so a hostile or confused answer cannot park the watcher for hours.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxAttempts   = 4
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Dispatcher sends a digest to a notifier with a per-attempt timeout and
// retries. Zero fields take the defaults.
type Dispatcher struct {
	// Timeout bounds one attempt.
	Timeout time.Duration
	// MaxAttempts bounds the attempts, the first included.
	MaxAttempts int
	// NewBackOff gives the waits between attempts when the server names
	// none; default exponential from 1s to 30s with jitter.
	NewBackOff func() backoff.BackOff
	// Sleep waits d or until ctx ends; tests replace it to not wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for Retry-After dates.
	Now func() time.Time
}

// DeliveryError is a notifier that gave up.
type DeliveryError struct {
	Notifier string
	Attempts int
	Err      error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("%s: not delivered after %d %s: %v", e.Notifier, e.Attempts, alerts.Plural(e.Attempts, "attempt", "attempts"), e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Send delivers digest to n, retrying until it succeeds, fails for good,
// runs out of attempts or ctx ends; then it returns a *DeliveryError. An
// empty digest sends nothing.
func (d *Dispatcher) Send(ctx context.Context, n Notifier, digest alerts.Digest) error {
	if digest.Empty() {
		return nil
	}
	bo := d.backOff()
	for attempts := 1; ; attempts++ {
		err := d.attempt(ctx, n, digest)
		if err == nil {
			return nil
		}
		gaveUp := &DeliveryError{Notifier: safeName(n), Attempts: attempts, Err: err}
		if ctx.Err() != nil || !Retryable(err) || attempts >= cmp.Or(max(d.MaxAttempts, 0), DefaultMaxAttempts) {
			return gaveUp
		}
		wait := bo.NextBackOff()
		if after, ok := d.retryAfter(err); ok {
			wait = after
		}
		if wait == backoff.Stop || d.sleep(ctx, wait) != nil {
			return gaveUp
		}
	}
}

// attempt runs one Notify under the per-attempt timeout, turning a panic in
// a notifier into an error so it cannot take the watcher down.
func (d *Dispatcher) attempt(ctx context.Context, n Notifier, digest alerts.Digest) (err error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(max(d.Timeout, 0), DefaultTimeout))
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: notifier panicked: %v", safeName(n), r)
		}
	}()
	return n.Notify(ctx, digest)
}

// retryAfter is the server's requested wait, capped, if it named one.
func (d *Dispatcher) retryAfter(err error) (time.Duration, bool) {
	var he *HTTPError
	if !errors.As(err, &he) || he.RetryAfter == "" {
		return 0, false
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	wait, ok := ParseRetryAfter(he.RetryAfter, now())
	if !ok {
		return 0, false
	}
	return min(wait, DefaultMaxRetryAfter), true
}

func (d *Dispatcher) backOff() backoff.BackOff {
	if d.NewBackOff != nil {
		return d.NewBackOff()
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = time.Second
	b.MaxInterval = 30 * time.Second
	b.MaxElapsedTime = 0 // attempts bound the retries, not the clock
	b.Reset()
	return b
}

func (d *Dispatcher) sleep(ctx context.Context, wait time.Duration) error {
	if d.Sleep != nil {
		return d.Sleep(ctx, wait)
	}
	return Sleep(ctx, wait)
}

// Sleep waits for wait or until ctx ends, whichever comes first; the
// dispatcher's default, and the watcher's between ticks.
func Sleep(ctx context.Context, wait time.Duration) error {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// safeName calls Name, which is notifier code too.
func safeName(n Notifier) (name string) {
	if n == nil {
		return "<nil notifier>"
	}
	defer func() {
		if recover() != nil {
			name = "<unnamed notifier>"
		}
	}()
	return n.Name()
}
