package cmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/alerts/notify"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// alertSecrets are values of listed keys, one per shape a message carries
// them in; pin is not on the default list (--redact-keys +pin adds it).
var alertSecrets = []string{"pw-Secret-1111", "tok-Secret-2222", "api-Secret-3333", "bearer-Secret-4444", "ssn-Secret-5555",
	"cookie-Secret-6666", "pin-Secret-7777"}

// secretMessage holds every alert secret after a listed key.
func secretMessage() string {
	s := alertSecrets
	return fmt.Sprintf(`login for bob failed: password=%s {"token":"%s"} [api_key] => %s Authorization: Bearer %s 'ssn' => '%s' cookie: laravel_session=%s pin=%s`,
		s[0], s[1], s[2], s[3], s[4], s[5], s[6])
}

// bodyRecorder keeps every request body a channel received.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []string
}

func (b *bodyRecorder) server(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.bodies = append(b.bodies, string(body))
		b.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (b *bodyRecorder) all() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.bodies, "\n")
}

// TestAlertBodiesNeverCarryListedValues: a failure whose message holds
// listed keys' values fires an alert through every channel — Slack, the
// JSON webhook, PagerDuty, a command's stdin, the printed line, the JSON
// tick line — and is kept in the state file: none holds a value, with or
// without --redact (alert bodies always mask), and --redact-keys +pin
// masks one more.
func TestAlertBodiesNeverCarryListedValues(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonOut), func(t *testing.T) {
			dsn, s := monitorDB(t)
			var slack, hook, pd bodyRecorder
			slackSrv, hookSrv, pdSrv := slack.server(t), hook.server(t), pd.server(t)
			dir := t.TempDir()
			stdinCopy := filepath.Join(dir, "stdin.json")
			script := filepath.Join(dir, "notify.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >> "+stdinCopy+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			state := filepath.Join(dir, "state.json")
			h := newHarness(t, false)
			h.f.Conn.DSN = dsn
			now := testNow
			h.f.Now = func() time.Time { return now }
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			tick := 0
			steps := []func(time.Time){func(at time.Time) {
				f := monitorFailure(900, "default", `App\Jobs\Login`, at)
				f.Exception = "RuntimeException: " + secretMessage() + " in /app/X.php:1\nStack trace:\n#0 {main}"
				sqltest.InsertFailed(t, s, f)
			}, func(time.Time) {}}
			args := []string{"--watch", "--max-failed", "1", "--window", "2m", "--alert-per", "class", "--state-file", state,
				"--slack-webhook", slackSrv.URL + "/services/T0/B0/x", "--webhook-url", hookSrv.URL, "--notify-command", script,
				"--redact-keys", "+pin"}
			if jsonOut {
				args = append(args, "--json")
			}
			cmd := NewCmdMonitor(h.f, func(ctx context.Context, o *MonitorOptions) error {
				pdn, err := notify.NewPagerDuty(notify.PagerDutyConfig{RoutingKey: "R0UTINGKEY0123456789abcdef012345", URL: pdSrv.URL})
				if err != nil {
					return err
				}
				o.Notifiers = []notify.Notifier{pdn}
				o.Sleep = func(ctx context.Context, d time.Duration) error {
					if tick == len(steps) {
						cancel()
						return ctx.Err()
					}
					now = now.Add(d)
					steps[tick](now)
					tick++
					return nil
				}
				return monitorRun(ctx, o)
			})
			root := NewCmdRoot(h.f) // the persistent --redact-keys lives on the root
			root.AddCommand(cmd)
			cmd.Use = "monitor-test"
			root.SetArgs(append([]string{"monitor-test", "--dsn", dsn}, args...))
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			if code := exitCodeFor(root.ExecuteContext(ctx)); code != ExitOK {
				t.Fatalf("exit %d: %s", code, h.errOut.String())
			}
			stdin, _ := os.ReadFile(stdinCopy)
			stateText, _ := os.ReadFile(state)
			channels := map[string]string{"slack": slack.all(), "webhook": hook.all(), "pagerduty": pd.all(),
				"command stdin": string(stdin), "stdout": h.out.String(), "stderr": h.errOut.String(), "state file": string(stateText)}
			for name, text := range channels {
				for _, secret := range alertSecrets {
					if strings.Contains(text, secret) {
						t.Errorf("%s holds %q:\n%s", name, secret, text)
					}
				}
			}
			// The alert went out, with the message's words and its masks.
			for _, name := range []string{"slack", "webhook", "pagerduty", "command stdin", "stdout"} {
				if !strings.Contains(channels[name], "login for bob failed") || !strings.Contains(channels[name], "[redacted]") {
					t.Errorf("%s lacks the masked example:\n%.2000s", name, channels[name])
				}
			}
		})
	}
}

// TestRedactionFlagsAndEnv: --redact-keys and JOBTRIAGE_REDACT(_KEYS) are
// read once, and a bad value is a usage error before anything runs.
func TestRedactionFlagsAndEnv(t *testing.T) {
	for _, c := range []struct {
		flags   RedactFlags
		env     map[string]string
		on      bool
		pin     bool // the list masks pin
		wantErr string
	}{
		{RedactFlags{}, nil, false, false, ""},
		{RedactFlags{On: true}, nil, true, false, ""},
		{RedactFlags{}, map[string]string{"JOBTRIAGE_REDACT": "1", "JOBTRIAGE_REDACT_KEYS": "pin"}, true, true, ""},
		{RedactFlags{Keys: "+pin"}, map[string]string{"JOBTRIAGE_REDACT_KEYS": "nothing"}, false, true, ""},
		{RedactFlags{}, map[string]string{"JOBTRIAGE_REDACT": "maybe"}, false, false, "JOBTRIAGE_REDACT"},
		{RedactFlags{Keys: "pin,+otp"}, nil, false, false, "--redact-keys"},
		{RedactFlags{}, map[string]string{"JOBTRIAGE_REDACT_KEYS": ",,"}, false, false, "JOBTRIAGE_REDACT_KEYS"},
	} {
		f := &Factory{Redact: c.flags, Getenv: func(k string) string { return c.env[k] }}
		on, keys, err := f.redaction()
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || exitCodeFor(err) != ExitUsage {
				t.Errorf("%+v %v: err %v", c.flags, c.env, err)
			}
			continue
		}
		if err != nil || on != c.on || keys.Match("pin") != c.pin || (!c.pin && !keys.Match("password")) {
			t.Errorf("%+v %v: on %v pin %v err %v", c.flags, c.env, on, keys.Match("pin"), err)
		}
	}
	h := newHarness(t, false)
	if code := h.run("failed", "--redact-keys", "a,+b", "--dsn", "sqlite:/nonexistent"); code != ExitUsage ||
		!strings.Contains(h.errOut.String(), "--redact-keys") {
		t.Errorf("bad list: exit %d %q", code, h.errOut.String())
	}
}
