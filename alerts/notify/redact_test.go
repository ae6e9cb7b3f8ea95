package notify

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

const (
	slackToken   = "xoxbSECRETtoken123456"
	routingKey   = "R0UTINGKEYsecret98765"
	bearerToken  = "bearerSECRET5555"
	queryToken   = "qSECRET4444"
	userPassword = "pwSECRET3333"
)

var allSecrets = []string{slackToken, routingKey, bearerToken, queryToken, userPassword}

func assertNoSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range allSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s leaks a secret: %q", what, text)
		}
	}
}

// echoServer answers 403 with everything it received, the way a confused
// proxy or API error page might.
func echoServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "denied %s %s auth=%s body=%s", r.URL.String(), r.URL.Path, r.Header.Get("Authorization"), body.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func secretNotifiers(t *testing.T, base string) []Notifier {
	t.Helper()
	slack, err := NewSlack(SlackConfig{WebhookURL: base + "/services/T0/B0/" + slackToken})
	if err != nil {
		t.Fatal(err)
	}
	hook, err := NewWebhook(WebhookConfig{
		URL: strings.Replace(base, "http://", "http://ops:"+userPassword+"@", 1) + "/hook?token=" + queryToken,
	})
	if err != nil {
		t.Fatal(err)
	}
	pd, err := NewPagerDuty(PagerDutyConfig{RoutingKey: routingKey, URL: base + "/v2/enqueue"})
	if err != nil {
		t.Fatal(err)
	}
	return []Notifier{slack, hook, pd}
}

func TestErrorsNeverShowSecrets(t *testing.T) {
	for _, tt := range []struct {
		name string
		base func(t *testing.T) string
		want string
	}{
		{"server echoes the request", func(t *testing.T) string { return echoServer(t).URL }, "HTTP 403"},
		{"connection refused", closedURL, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			d := &Dispatcher{
				MaxAttempts: 2,
				NewBackOff:  func() backoff.BackOff { return &backoff.ZeroBackOff{} },
				Sleep:       func(context.Context, time.Duration) error { return nil },
			}
			var errs []error
			for _, n := range secretNotifiers(t, tt.base(t)) {
				err := d.Send(context.Background(), n, fixtureDigest())
				fmt.Fprintf(&logged, "%s: %v\n", n.Name(), err)
				errs = append(errs, err)
			}
			err := errors.Join(errs...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "://127.0.0.1:") || !strings.Contains(err.Error(), "/…") {
				t.Errorf("error %q does not show where it went as scheme://host/…", err)
			}
			assertNoSecrets(t, "joined error", err.Error())
			assertNoSecrets(t, "results", logged.String())
		})
	}
}

func TestConstructorErrorsNeverEchoSecrets(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  func() error
	}{
		{"slack bad scheme", func() error {
			_, err := NewSlack(SlackConfig{WebhookURL: "ftp://hooks.example/" + slackToken})
			return err
		}},
		{"slack unparsable", func() error {
			_, err := NewSlack(SlackConfig{WebhookURL: "http://[::1/" + slackToken})
			return err
		}},
		{"webhook no host", func() error {
			_, err := NewWebhook(WebhookConfig{URL: "https:///" + queryToken})
			return err
		}},
		{"pagerduty bad routing key", func() error {
			_, err := NewPagerDuty(PagerDutyConfig{RoutingKey: routingKey + " \n" + routingKey})
			return err
		}},
		{"pagerduty bad URL", func() error {
			_, err := NewPagerDuty(PagerDutyConfig{RoutingKey: "abcd", URL: "mailto:" + routingKey})
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			if err == nil {
				t.Fatal("accepted")
			}
			assertNoSecrets(t, "error", err.Error())
		})
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://hooks.slack.com/services/T0/B0/" + slackToken:  "https://hooks.slack.com/…",
		"http://user:" + userPassword + "@h.example:8080/x?t=1": "http://h.example:8080/…",
		"not a url":                 "[redacted URL]",
		"http://[::1/" + queryToken: "[redacted URL]",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A webhook URL with user info makes Go send "Authorization: Basic
// base64(user:password)"; a server echoing it must not put it on screen,
// nor a password= field of its answer.
func TestEchoedBasicCredentialsAreScrubbed(t *testing.T) {
	srv := echoServer(t)
	w, err := NewWebhook(WebhookConfig{URL: strings.Replace(srv.URL, "http://", "http://ops:"+userPassword+"@", 1) + "/hook"})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Notify(context.Background(), fixtureDigest())
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") {
		t.Fatalf("error = %v", err)
	}
	for _, leak := range []string{userPassword, base64.StdEncoding.EncodeToString([]byte("ops:" + userPassword))} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("error leaks %q: %s", leak, err)
		}
	}
}

// A failing command whose stderr echoes its arguments (a --token) shows
// the first line without them.
func TestCommandStderrEchoingArgumentsIsScrubbed(t *testing.T) {
	c, err := NewCommand(CommandConfig{Path: "/bin/sh", Args: []string{"-c", `echo "bad token: $1 $2" >&2; exit 3`, "sh", "--token", bearerToken + "-cmd", "--key=" + routingKey}})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Notify(context.Background(), fixtureDigest())
	var ce *CommandError
	if !errors.As(err, &ce) || ce.ExitCode != 3 || !strings.Contains(ce.Stderr, "bad token") {
		t.Fatalf("error = %v", err)
	}
	assertNoSecrets(t, "command error", err.Error())
	if strings.Contains(err.Error(), bearerToken) {
		t.Errorf("leaks the token: %s", err)
	}
}
