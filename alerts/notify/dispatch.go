package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/jobtriage/jobtriage/alerts"
)

// Dispatcher defaults.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxAttempts   = 4
	DefaultMaxRetryAfter = 2 * time.Minute
)

// Dispatcher sends a digest to every notifier at once, each with its own
// per-attempt timeout and retries, so one failing or slow channel never
// stops the others. Zero fields take the defaults.
type Dispatcher struct {
	Notifiers []Notifier
	// Timeout bounds one attempt of one notifier.
	Timeout time.Duration
	// MaxAttempts bounds the attempts per notifier, the first included.
	MaxAttempts int
	// MaxRetryAfter caps a server's Retry-After, so a hostile or confused
	// answer cannot park the watcher for hours.
	MaxRetryAfter time.Duration
	// NewBackOff gives the waits between attempts when the server names
	// none; default exponential from 1s to 30s with jitter.
	NewBackOff func() backoff.BackOff
	// Sleep waits d or until ctx ends; tests replace it to not wait.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for Retry-After dates.
	Now func() time.Time
}

// Result is how one notifier fared.
type Result struct {
	Notifier string
	Attempts int
	Err      error // nil when delivered
}

// DeliveryError is a notifier that gave up.
type DeliveryError struct {
	Notifier string
	Attempts int
	Err      error
}

func (e *DeliveryError) Error() string {
	return fmt.Sprintf("%s: not delivered after %d %s: %v", e.Notifier, e.Attempts, plural(e.Attempts, "attempt", "attempts"), e.Err)
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Dispatch sends d to every notifier and waits for all of them. It returns
// one result per notifier, in order, and the failures joined (nil when all
// delivered). An empty digest sends nothing.
func (d *Dispatcher) Dispatch(ctx context.Context, digest alerts.Digest) ([]Result, error) {
	if digest.Empty() {
		return nil, nil
	}
	results := make([]Result, len(d.Notifiers))
	var wg sync.WaitGroup
	for i, n := range d.Notifiers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = d.deliver(ctx, n, digest)
		}()
	}
	wg.Wait()
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, &DeliveryError{Notifier: r.Notifier, Attempts: r.Attempts, Err: r.Err})
		}
	}
	return results, errors.Join(errs...)
}

// deliver retries one notifier until it succeeds, fails for good, runs out of
// attempts or ctx ends.
func (d *Dispatcher) deliver(ctx context.Context, n Notifier, digest alerts.Digest) Result {
	res := Result{Notifier: safeName(n)}
	bo := d.backOff()
	for {
		res.Attempts++
		err := d.attempt(ctx, n, digest)
		if err == nil {
			res.Err = nil
			return res
		}
		res.Err = err
		if ctx.Err() != nil || !Retryable(err) || res.Attempts >= d.maxAttempts() {
			return res
		}
		wait := bo.NextBackOff()
		if after, ok := d.retryAfter(err); ok {
			wait = after
		}
		if wait == backoff.Stop {
			return res
		}
		if err := d.sleep(ctx, wait); err != nil {
			return res
		}
	}
}

// attempt runs one Notify under the per-attempt timeout, turning a panic in
// a notifier into an error so it cannot take the watcher down.
func (d *Dispatcher) attempt(ctx context.Context, n Notifier, digest alerts.Digest) (err error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
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
	limit := d.MaxRetryAfter
	if limit <= 0 {
		limit = DefaultMaxRetryAfter
	}
	return min(wait, limit), true
}

func (d *Dispatcher) maxAttempts() int {
	if d.MaxAttempts <= 0 {
		return DefaultMaxAttempts
	}
	return d.MaxAttempts
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
