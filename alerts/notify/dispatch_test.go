package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/jobtriage/jobtriage/alerts"
)

// sleeps records the waits a dispatcher asked for instead of waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	return nil
}

func (s *sleeps) get() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func testDispatcher(s *sleeps) *Dispatcher {
	return &Dispatcher{
		Timeout:    2 * time.Second,
		NewBackOff: func() backoff.BackOff { return backoff.NewConstantBackOff(3 * time.Second) },
		Sleep:      s.sleep,
		Now:        t0,
	}
}

func status(code int, headers ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "answer %d\nsecond line", code)
	}
}

func newTestWebhook(t *testing.T, url string) *Webhook {
	t.Helper()
	w, err := NewWebhook(WebhookConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestDispatchRetries(t *testing.T) {
	for _, tt := range []struct {
		name      string
		answers   []func(http.ResponseWriter)
		attempts  int
		waits     []time.Duration
		wantErr   string // "" when delivered
		retryable bool
	}{
		{
			name:     "delivered at once",
			attempts: 1,
		},
		{
			name:     "5xx then success",
			answers:  []func(http.ResponseWriter){status(502), status(503)},
			attempts: 3,
			waits:    []time.Duration{3 * time.Second, 3 * time.Second},
		},
		{
			name:     "429 with Retry-After seconds",
			answers:  []func(http.ResponseWriter){status(429, "Retry-After", "7")},
			attempts: 2,
			waits:    []time.Duration{7 * time.Second},
		},
		{
			name:     "429 with Retry-After as an HTTP date",
			answers:  []func(http.ResponseWriter){status(429, "Retry-After", t0().Add(42*time.Second).Format(http.TimeFormat))},
			attempts: 2,
			waits:    []time.Duration{42 * time.Second},
		},
		{
			name:     "Retry-After is capped",
			answers:  []func(http.ResponseWriter){status(429, "Retry-After", "86400")},
			attempts: 2,
			waits:    []time.Duration{DefaultMaxRetryAfter},
		},
		{
			name:     "unreadable Retry-After falls back to the backoff",
			answers:  []func(http.ResponseWriter){status(503, "Retry-After", "soon")},
			attempts: 2,
			waits:    []time.Duration{3 * time.Second},
		},
		{
			name:     "4xx is final",
			answers:  []func(http.ResponseWriter){status(404)},
			attempts: 1,
			wantErr:  "HTTP 404 Not Found: answer 404",
		},
		{
			name:     "a 3xx is not followed and is final",
			answers:  []func(http.ResponseWriter){status(302, "Location", "http://127.0.0.1:1/elsewhere")},
			attempts: 1,
			wantErr:  "HTTP 302",
		},
		{
			name:      "gives up after MaxAttempts",
			answers:   []func(http.ResponseWriter){status(500), status(500), status(500), status(500), status(500)},
			attempts:  DefaultMaxAttempts,
			waits:     []time.Duration{3 * time.Second, 3 * time.Second, 3 * time.Second},
			wantErr:   "not delivered after 4 attempts",
			retryable: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc, srv := newRecorder(t, tt.answers...)
			var s sleeps
			err := testDispatcher(&s).Send(context.Background(), newTestWebhook(t, srv.URL+"/hook"), fixtureDigest())
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Dispatch: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Dispatch error = %v, want it to contain %q", err, tt.wantErr)
			}
			if err != nil && Retryable(err) != tt.retryable {
				t.Errorf("Retryable(%v) = %v", err, !tt.retryable)
			}
			var de *DeliveryError
			if rc.requests() != tt.attempts || (err != nil && (!errors.As(err, &de) || de.Attempts != tt.attempts)) {
				t.Errorf("error %v, %d requests; want %d attempts", err, rc.requests(), tt.attempts)
			}
			if got := s.get(); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits = %v, want %v", got, tt.waits)
			}
		})
	}
}

func TestDispatchTimesOutEachAttempt(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	var s sleeps
	d := testDispatcher(&s)
	d.Timeout = 50 * time.Millisecond
	d.MaxAttempts = 2
	start := time.Now()
	err := d.Send(context.Background(), newTestWebhook(t, srv.URL+"/slow"), fixtureDigest())
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a deadline", err)
	}
	if de := (*DeliveryError)(nil); !errors.As(err, &de) || de.Attempts != 2 {
		t.Errorf("error %v, want 2 attempts (a timeout is retryable)", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("took %s: the per-attempt timeout was not applied", elapsed)
	}
}

// funcNotifier is a notifier made of a function.
type funcNotifier struct {
	name string
	fn   func(context.Context) error
}

func (f funcNotifier) Name() string                                      { return f.name }
func (f funcNotifier) Notify(ctx context.Context, _ alerts.Digest) error { return f.fn(ctx) }

// A notifier that fails, panics or is nil is reported as a DeliveryError,
// and the next one is still delivered.
func TestDispatchIsolatesNotifiers(t *testing.T) {
	rc, srv := newRecorder(t, status(400))
	delivered := 0
	var s sleeps
	d := testDispatcher(&s)
	var errs []string
	for _, n := range []Notifier{
		newTestWebhook(t, srv.URL+"/bad"),
		funcNotifier{"panics", func(context.Context) error { panic("boom") }},
		nil,
		funcNotifier{"works", func(context.Context) error { delivered++; return nil }},
	} {
		err := d.Send(context.Background(), n, fixtureDigest())
		var de *DeliveryError
		if err != nil && !errors.As(err, &de) {
			t.Errorf("error is not a *DeliveryError: %T", err)
		}
		errs = append(errs, fmt.Sprint(err))
	}
	if delivered != 1 || rc.requests() != 1 {
		t.Errorf("delivered %d, webhook requests %d; want 1 and 1", delivered, rc.requests())
	}
	for i, want := range []string{"webhook: not delivered", "panics: not delivered after 1 attempt: panics: notifier panicked: boom", "<nil notifier>", "<nil>"} {
		if !strings.Contains(errs[i], want) {
			t.Errorf("error %q does not mention %q", errs[i], want)
		}
	}
}

func TestDispatchStopsWhenCallerCancels(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	d := &Dispatcher{Sleep: func(context.Context, time.Duration) error { t.Error("slept after cancel"); return nil }}
	flaky := funcNotifier{"flaky", func(context.Context) error {
		calls++
		cancel()
		return &HTTPError{Notifier: "flaky", StatusCode: 503}
	}}
	if err := d.Send(ctx, flaky, fixtureDigest()); err == nil || calls != 1 {
		t.Errorf("err = %v, calls = %d; want an error after one call", err, calls)
	}
}

func TestDispatchEmptyDigestSendsNothing(t *testing.T) {
	x := funcNotifier{"x", func(context.Context) error { t.Error("notified"); return nil }}
	if err := (&Dispatcher{}).Send(context.Background(), x, alerts.Digest{At: t0()}); err != nil {
		t.Errorf("Send(empty) = %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := t0()
	for _, tt := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{" 120 ", 2 * time.Minute, true},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Sunday, 30-Nov-26 12:00:30 GMT", 30 * time.Second, true}, // RFC 850
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
		{"99999999999999999999", time.Duration(1<<63 - 1), true},
	} {
		got, ok := ParseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCommandErrors(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cfg       CommandConfig
		want      string
		retryable bool
	}{
		{
			name: "non-zero exit carries stderr's first line",
			cfg:  CommandConfig{Path: "/bin/sh", Args: []string{"-c", "cat >/dev/null; printf '\\n  mail server refused\\033[2J\\nmore\\n' >&2; exit 3", "--secret-arg=hunter22"}},
			want: "command:sh: exited with status 3: mail server refused\ufffd[2J",
		},
		{
			name:      "timeout",
			cfg:       CommandConfig{Path: "/bin/sh", Args: []string{"-c", "sleep 10"}, Timeout: 50 * time.Millisecond},
			want:      "command:sh: did not finish: context deadline exceeded",
			retryable: true,
		},
		{
			name: "program missing",
			cfg:  CommandConfig{Path: filepath.Join(t.TempDir(), "no-such-program"), Args: []string{"hunter22"}},
			want: "command:no-such-program: cannot run the program: ",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCommand(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Notify(context.Background(), fixtureDigest())
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error = %v, want prefix %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter22") {
				t.Errorf("error shows an argument: %v", err)
			}
			if Retryable(err) != tt.retryable {
				t.Errorf("Retryable = %v, want %v", !tt.retryable, tt.retryable)
			}
		})
	}
	if _, err := NewCommand(CommandConfig{Path: " "}); err == nil {
		t.Error("NewCommand accepted an empty path")
	}
}
