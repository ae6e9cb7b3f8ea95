// Package notify delivers alert digests to the channels on-call people read:
// Slack, a generic JSON webhook, PagerDuty and a local command.
// A Dispatcher sends a digest to a notifier with timeouts and retries.
//
// Secrets live in webhook URLs and routing keys, so no error or log
// line produced here contains them: URLs are shown as scheme://host/… only and
// anything a server echoes back is scrubbed of the configured secrets.
package notify

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
)

// Notifier sends one digest somewhere. Notify must honour ctx's deadline.
type Notifier interface {
	Name() string
	Notify(ctx context.Context, d alerts.Digest) error
}

// HTTPError is a non-2xx answer from a webhook. It never holds the URL's
// secret parts; Body is the first line of the answer, scrubbed and cut short.
type HTTPError struct {
	Notifier   string
	Endpoint   string // redacted: scheme://host/…
	StatusCode int
	// RetryAfter is the raw Retry-After header, parsed by the dispatcher.
	RetryAfter string
	Body       string
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s: %s answered HTTP %d %s", e.Notifier, e.Endpoint, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// CommandError is a command notifier that ran and exited non-zero. It is final:
// running the same command on the same input is expected to fail the same way.
type CommandError struct {
	Notifier string
	ExitCode int
	Stderr   string // first line of stderr, cleaned
}

func (e *CommandError) Error() string {
	msg := fmt.Sprintf("%s: exited with status %d", e.Notifier, e.ExitCode)
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Retryable reports whether err is worth another attempt: 429 and 5xx
// answers, network errors and attempt timeouts are (a *url.Error and
// context.DeadlineExceeded are net.Errors); other HTTP answers, failed
// commands and configuration errors are not.
func Retryable(err error) bool {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.StatusCode == http.StatusTooManyRequests || he.StatusCode >= 500
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// ParseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date
// (RFC 9110 §10.2.3). A date in the past means no wait. ok is false when the
// header is absent or unreadable.
func ParseRetryAfter(v string, now time.Time) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if len(v) > 9 { // over 31 years: treat as "a very long time", the cap applies
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
