package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func t0() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) }

// hostileKey is what a job class read from the database may look like.
const hostileKey = "class:App\\Jobs\\<!channel>\x1b[31m\u202eSend & Bill"

var fixtureApp = alerts.App{Name: "shop", Environment: "production", Database: "postgres://db.internal:5432/shop table failed_jobs"}

// fixtureDigest has one of each event, one of them with a hostile key.
func fixtureDigest() alerts.Digest {
	now := t0().Add(10 * time.Minute)
	return alerts.Digest{At: now, App: fixtureApp, Notifications: []alerts.Notification{
		{
			Event: alerts.EventFiring,
			Rule:  alerts.Rule{Key: "queue:emails", Threshold: 3, Window: time.Minute},
			Count: 3, Peak: 3, Since: now, At: now,
			Detail: alerts.Detail{Class: `App\Jobs\SendInvoice`, Message: "Connection refused [tcp://smtp:25]",
				Command: "jobtriage failed --group --queue emails --since 1m"},
		},
		{
			Event: alerts.EventReminder,
			Rule:  alerts.Rule{Key: hostileKey, Threshold: 5, Window: time.Hour, For: 2 * time.Minute, Repeat: 10 * time.Minute},
			Count: 7, Peak: 9, Since: t0(), At: now,
			Detail: alerts.Detail{Class: hostileKey[len("class:"):], Message: "<!here> \x1b]52;c;AAAA\x07 paid",
				Command: "jobtriage failed --class 'App\\Jobs\\<!channel>' --since 1h"},
		},
		{
			Event: alerts.EventResolved,
			Rule:  alerts.Rule{Key: "app", Threshold: 1, Window: 90 * time.Second, ResolveBelow: -1},
			Count: 0, Peak: 1, Since: t0().Add(5 * time.Minute), At: now,
		},
	}}
}

// recorder is a webhook that records every request and answers with the
// scripted responses in turn (then 200).
type recorder struct {
	mu      sync.Mutex
	bodies  [][]byte
	headers []http.Header
	paths   []string
	answers []func(http.ResponseWriter)
}

func (rc *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.bodies = append(rc.bodies, body)
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.paths = append(rc.paths, r.URL.RequestURI())
	var answer func(http.ResponseWriter)
	if len(rc.answers) > 0 {
		answer, rc.answers = rc.answers[0], rc.answers[1:]
	}
	rc.mu.Unlock()
	if answer != nil {
		answer(w)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *recorder) requests() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

func newRecorder(t *testing.T, answers ...func(http.ResponseWriter)) (*recorder, *httptest.Server) {
	t.Helper()
	rc := &recorder{answers: answers}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

// assertGolden compares JSON bodies, indented, with testdata/<name>.golden.json.
// Indenting keeps key order and content, so equal indented forms mean equal
// bodies on the wire.
func assertGolden(t *testing.T, name string, bodies ...[]byte) {
	t.Helper()
	var got bytes.Buffer
	for _, b := range bodies {
		if !json.Valid(b) {
			t.Fatalf("%s: body is not JSON: %q", name, b)
		}
		if err := json.Indent(&got, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteByte('\n')
	}
	path := filepath.Join("testdata", name+".golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./alerts/notify -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s body differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got.Bytes(), want)
	}
}

func TestSlackBody(t *testing.T) {
	rc, srv := newRecorder(t)
	s, err := NewSlack(SlackConfig{WebhookURL: srv.URL + "/services/T0000/B0000/XXXXXXXXXXXX"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Notify(context.Background(), fixtureDigest()); err != nil {
		t.Fatal(err)
	}
	if rc.requests() != 1 {
		t.Fatalf("%d requests, want 1", rc.requests())
	}
	assertGolden(t, "slack", rc.bodies[0])
	if ct := rc.headers[0].Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	if rc.paths[0] != "/services/T0000/B0000/XXXXXXXXXXXX" {
		t.Errorf("posted to %q", rc.paths[0])
	}
	// The hostile class name must not ping the channel nor reach a terminal raw.
	for _, bad := range []string{"<!channel>", "\x1b", "\u202e"} {
		if bytes.Contains(rc.bodies[0], []byte(bad)) {
			t.Errorf("Slack body contains %q", bad)
		}
	}
}

func TestSlackCapsLongDigests(t *testing.T) {
	d := alerts.Digest{At: t0()}
	for range 45 {
		d.Notifications = append(d.Notifications, fixtureDigest().Notifications[0])
	}
	body, err := marshal(slackBody(d))
	if err != nil {
		t.Fatal(err)
	}
	var msg slackMessage
	if err := json.Unmarshal(body, &msg); err != nil {
		t.Fatal(err)
	}
	if len(msg.Blocks) != 1+maxSlackLines+1 || msg.Blocks[len(msg.Blocks)-1].Text.Text != "… and 5 more" {
		t.Errorf("%d blocks, last %q; want %d ending with the 5 left out", len(msg.Blocks), msg.Blocks[len(msg.Blocks)-1].Text.Text, maxSlackLines+2)
	}
}

func TestWebhookBody(t *testing.T) {
	rc, srv := newRecorder(t)
	w, err := NewWebhook(WebhookConfig{URL: srv.URL + "/hook?token=s3cr3t-t0ken"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Notify(context.Background(), fixtureDigest()); err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "webhook", rc.bodies[0])
	// The key goes out verbatim (JSON-escaped): receivers match on it.
	var body Body
	if err := json.Unmarshal(rc.bodies[0], &body); err != nil {
		t.Fatal(err)
	}
	if body.Notifications[1].Key != hostileKey {
		t.Errorf("key = %q, want it verbatim", body.Notifications[1].Key)
	}
}

func TestPagerDutyBodies(t *testing.T) {
	rc, srv := newRecorder(t)
	p, err := NewPagerDuty(PagerDutyConfig{RoutingKey: "R0UT1NGKEY0000000000000000000000", URL: srv.URL + "/v2/enqueue"})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Notify(context.Background(), fixtureDigest()); err != nil {
		t.Fatal(err)
	}
	if rc.requests() != 3 {
		t.Fatalf("%d requests, want one per notification", rc.requests())
	}
	assertGolden(t, "pagerduty", rc.bodies...)
	if rc.paths[0] != "/v2/enqueue" {
		t.Errorf("posted to %q", rc.paths[0])
	}
}

func TestPagerDutyDedupKeyIsStable(t *testing.T) {
	mk := func() *PagerDuty {
		p, err := NewPagerDuty(PagerDutyConfig{RoutingKey: "k123"})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	app, otherApp := alerts.App{Name: "app-a"}, alerts.App{Name: "app-b"}
	a, b := mk(), mk()
	fire := alerts.Notification{Event: alerts.EventFiring, Rule: alerts.Rule{Key: "queue:emails", Threshold: 1, Window: time.Minute}}
	resolve := fire
	resolve.Event = alerts.EventResolved
	if got, want := b.Event(app, resolve).DedupKey, a.Event(app, fire).DedupKey; got != want {
		t.Errorf("resolve dedup_key %q != trigger dedup_key %q", got, want)
	}
	if a.DedupKey(app, "queue:emails") == a.DedupKey(app, "queue:email") {
		t.Error("different keys share a dedup_key")
	}
	if a.DedupKey(app, "queue:emails") == a.DedupKey(otherApp, "queue:emails") {
		t.Error("different apps share a dedup_key")
	}
	if k := a.DedupKey(app, strings.Repeat("x", 10000)); len(k) > 255 {
		t.Errorf("dedup_key is %d chars, PagerDuty allows 255", len(k))
	}
	if ev := a.Event(app, resolve); ev.EventAction != "resolve" || ev.Payload != nil {
		t.Errorf("resolve event = %+v", ev)
	}
}

// Two apps sharing a routing key: their sources and
// dedup keys differ by app, so one app's resolve never closes the other's
// incident; the same app keeps its keys across restarts.
func TestPagerDutyAppsSharingARoutingKey(t *testing.T) {
	p, err := NewPagerDuty(PagerDutyConfig{RoutingKey: "k123"})
	if err != nil {
		t.Fatal(err)
	}
	shop := alerts.App{Name: "shop", Environment: "production", Database: "postgres://a/shop table failed_jobs"}
	staging := shop
	staging.Environment = "staging"
	otherDB := shop
	otherDB.Database = "postgres://b/shop table failed_jobs"
	fire := fixtureDigest().Notifications[0]
	resolve := fire
	resolve.Event = alerts.EventResolved
	if p.Event(shop, fire).DedupKey != p.Event(shop, resolve).DedupKey {
		t.Error("an app's resolve does not match its trigger")
	}
	for _, other := range []alerts.App{staging, otherDB} {
		if p.DedupKey(shop, "app") == p.DedupKey(other, "app") {
			t.Errorf("%+v shares a dedup_key with %+v", other, shop)
		}
	}
	ev := p.Event(shop, fire)
	if ev.Payload.Source != "shop (production) · postgres://a/shop table failed_jobs" {
		t.Errorf("source %q", ev.Payload.Source)
	}
	if !strings.HasPrefix(ev.Payload.Summary, "[shop (production)] FIRING queue:emails") || !strings.Contains(ev.Payload.Summary, "SendInvoice: Connection refused") {
		t.Errorf("summary %q", ev.Payload.Summary)
	}
}

func TestCommandReceivesBodyOnStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "stdin.json")
	c, err := NewCommand(CommandConfig{Path: "/bin/sh", Args: []string{"-c", `cat > "$1"`, "sh", out}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Notify(context.Background(), fixtureDigest()); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "webhook", got) // the same documented body
	if c.Name() != "command:sh" {
		t.Errorf("Name = %q", c.Name())
	}
}

// TestLines: the plain line of each notification, as the watcher prints it
// after the time.
func TestLines(t *testing.T) {
	var buf bytes.Buffer
	for _, n := range fixtureDigest().Notifications {
		buf.WriteString(timestamp(n.At) + " " + Line(n) + "\n")
	}
	want := "2026-11-30T12:10:00Z FIRING queue:emails: 3 failures in the last 1m (threshold 3) · App\\Jobs\\SendInvoice: Connection refused [tcp://smtp:25] · jobtriage failed --group --queue emails --since 1m\n" +
		"2026-11-30T12:10:00Z STILL FIRING class:App\\Jobs\\<!channel>\ufffd[31m\ufffdSend & Bill: 7 failures in the last 1h (threshold 5, peak 9, since 2026-11-30T12:00:00Z) · App\\Jobs\\<!channel>\ufffd[31m\ufffdSend & Bill: <!here> \ufffd]52;c;AAAA\ufffd paid · jobtriage failed --class 'App\\Jobs\\<!channel>' --since 1h\n" +
		"2026-11-30T12:10:00Z RESOLVED app: 0 failures in the last 1m30s (peak 1, firing since 2026-11-30T12:05:00Z)\n"
	if buf.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", buf.String(), want)
	}
}

func TestHeadline(t *testing.T) {
	if got := Headline(fixtureDigest()); got != "jobtriage shop (production): 1 firing, 1 still firing, 1 resolved" {
		t.Errorf("Headline = %q", got)
	}
	if got := Headline(alerts.Digest{}); got != "jobtriage: nothing to report" {
		t.Errorf("Headline(empty) = %q", got)
	}
}
