package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// maxAnswerBytes bounds how much of a webhook's answer is read: enough for an
// error message, never a hostile endless body.
const maxAnswerBytes = 64 << 10

// endpoint is one secret-bearing URL a notifier posts JSON to; notifier
// names it.
type endpoint struct {
	notifier string
	url      string
	secrets  scrubber
}

// Name labels the notifier.
func (e endpoint) Name() string { return e.notifier }

// post sends v as JSON and turns anything but a 2xx answer into an error
// free of secrets.
func (e endpoint) post(ctx context.Context, v any) error {
	body, err := marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", e.notifier, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return e.secrets.wrap(e.notifier, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "jobtriage")
	// Redirects are not followed: a redirected webhook would lose its POST
	// body, and the new location would show up unredacted in errors.
	// Timeouts come from the per-attempt context.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return e.secrets.wrap(e.notifier, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return &HTTPError{
		Notifier:   e.notifier,
		Endpoint:   RedactURL(e.url),
		StatusCode: resp.StatusCode,
		RetryAfter: resp.Header.Get("Retry-After"),
		Body:       firstLine(e.secrets.scrub(string(answer)), 200),
	}
}

// marshal encodes v as compact JSON without HTML escaping: the bodies are read
// by chat tools and people, not pasted into HTML, and "<" reads better than
// "\u003c". Bidi and other invisible controls are written as \uXXXX escapes
// (sanitize.JSON): the body still decodes to the verbatim text, but a person
// reading it raw (a log, a request inspector) is not shown text reordered by
// a hostile class name.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return sanitize.JSON(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}
