package cmd

import (
	"slices"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/alerts/watch"
)

// TestNewCmdMonitor: monitor's flags through runF — the defaults, each flag
// landing in its option, and every refused combination a usage error (exit
// 2) before anything runs. The context flags have their own test
// (TestNewCmdMonitorContextFlags).
func TestNewCmdMonitor(t *testing.T) {
	p := parseWith(t, NewCmdMonitor)
	if p.code != ExitOK {
		t.Fatalf("defaults: exit %d %s", p.code, p.err)
	}
	o := p.opts
	if o.Watch || o.JSON || o.Format != "" || o.MaxSize != 0 || o.MaxFailed != 0 || o.MaxAge != 0 ||
		o.Window != time.Minute || o.Interval != 15*time.Second || o.BlindAfter != watch.DefaultBlindAfter ||
		o.Parallel != defaultMonitorParallel || len(o.Queues) != 0 || o.Listen != "" {
		t.Errorf("defaults: %+v", o)
	}

	p = parseWith(t, NewCmdMonitor, "emails", "redis:default",
		"--max", "10", "--max-age", "5m", "--max-failed", "3", "--window", "10m",
		"--for", "1m", "--repeat", "30m", "--resolve-below", "-1", "--retry-after", "2m",
		"--watch", "--interval", "5s", "--json", "--alert-per", "queue", "--alert-per", "signature",
		"--state-file", "none", "--blind-after", "1m", "--webhook-url", "http://127.0.0.1:1/hook")
	if p.code != ExitOK {
		t.Fatalf("flags: exit %d %s", p.code, p.err)
	}
	o = p.opts
	if !slices.Equal(o.Queues, []string{"emails", "redis:default"}) || o.MaxSize != 10 || o.MaxAge != 5*time.Minute ||
		o.MaxFailed != 3 || o.Window != 10*time.Minute || o.For != time.Minute || o.Repeat != 30*time.Minute ||
		o.ResolveBelow != -1 || o.RetryAfter != 2*time.Minute || !o.Watch || o.Interval != 5*time.Second || !o.JSON ||
		!slices.Equal(o.AlertPer, []string{"queue", "signature"}) || o.StateFile != "none" || o.BlindAfter != time.Minute ||
		o.Notify.WebhookURL != "http://127.0.0.1:1/hook" {
		t.Errorf("flags: %+v", o)
	}

	if p := parseWith(t, NewCmdMonitor, "--format", "prometheus"); p.code != ExitOK || p.opts.Format != "prometheus" {
		t.Errorf("--format prometheus: exit %d %s", p.code, p.err)
	}

	usageCases(t, NewCmdMonitor, map[string][]string{
		"must not be negative":                    {"--max", "-1"},
		"--window must be a whole number":         {"--window", "1500ms"},
		"--retry-after must not be negative":      {"--retry-after", "-1s"},
		"--for and --repeat must not be negative": {"--repeat", "-1m"},
		"--format must be table or prometheus":    {"--format", "yaml"},
		"alternatives":                            {"--json", "--format", "prometheus"},
		"--alert-per takes queue, class":          {"--alert-per", "host"},
		"--interval must be at least 1s":          {"--watch", "--max", "1", "--interval", "500ms"},
		"--format prometheus is for one check":    {"--watch", "--max", "1", "--format", "prometheus"},
		"--watch needs something to alert on":     {"--watch"},
		"--blind-after must be at least 1s":       {"--watch", "--max", "1", "--blind-after", "0s"},
		"invalid argument":                        {"--max", "many"},
	})
}

// TestNewCmdDoctor: doctor takes --json and no arguments.
func TestNewCmdDoctor(t *testing.T) {
	if p := parseWith(t, NewCmdDoctor); p.code != ExitOK || p.opts.JSON {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, p.opts)
	}
	if p := parseWith(t, NewCmdDoctor, "--json"); p.code != ExitOK || !p.opts.JSON || p.opts.Config == nil {
		t.Errorf("--json: exit %d %s %+v", p.code, p.err, p.opts)
	}
	usageCases(t, NewCmdDoctor, map[string][]string{
		"takes no arguments": {"extra"},
		"unknown flag":       {"--fix"},
	})
}
