package contexts

import (
	"os"
	"path/filepath"

	"github.com/jobtriage/jobtriage/internal/appprofile"
)

// Environment variables of the watcher's notification channels; each is
// also read from the app's .env file, after the real environment.
const (
	EnvSlackWebhook  = "JOBTRIAGE_SLACK_WEBHOOK"
	EnvWebhookURL    = "JOBTRIAGE_WEBHOOK_URL"
	EnvPagerDutyKey  = "JOBTRIAGE_PAGERDUTY_ROUTING_KEY"
	EnvNotifyCommand = "JOBTRIAGE_NOTIFY_COMMAND"
)

// NotifySources are the four places a watcher's channels come from.
type NotifySources struct {
	// Flags are the monitor flags' values ("" = unset).
	Flags  Notify
	Getenv func(string) string
	// Context is the context the watcher runs in (nil for none).
	Context *Context
	// EnvFile is the app's .env file (--env-file); "" means the context's,
	// else the one in the context's app directory, else the one in the
	// working directory Getwd names.
	EnvFile string
	Getwd   func() (string, error)
}

// ResolveNotify picks each channel's setting: the flag, else the
// environment, else the context, else the app's .env file. A .env that is
// missing, not a regular file or unreadable only holds no setting.
func ResolveNotify(s NotifySources) Notify {
	dotenv := s.dotenv()
	var cn Notify
	if s.Context != nil {
		cn = s.Context.Notify
	}
	pick := func(flag, env, fromContext string) string {
		if flag != "" {
			return flag
		}
		if v := s.Getenv(env); v != "" {
			return v
		}
		if fromContext != "" {
			return fromContext
		}
		v, _ := appprofile.Cast(dotenv[env])
		return v
	}
	return Notify{
		SlackWebhook:        pick(s.Flags.SlackWebhook, EnvSlackWebhook, cn.SlackWebhook),
		WebhookURL:          pick(s.Flags.WebhookURL, EnvWebhookURL, cn.WebhookURL),
		PagerDutyRoutingKey: pick(s.Flags.PagerDutyRoutingKey, EnvPagerDutyKey, cn.PagerDutyRoutingKey),
		Command:             pick(s.Flags.Command, EnvNotifyCommand, cn.Command),
	}
}

// dotenv reads the app's .env; nil when there is none to read.
func (s NotifySources) dotenv() map[string]string {
	path := s.EnvFile
	if path == "" && s.Context != nil {
		path = s.Context.EnvFile
		if path == "" && s.Context.App != "" {
			path = filepath.Join(s.Context.App, ".env")
		}
	}
	if path == "" {
		dir, err := s.Getwd()
		if err != nil {
			return nil
		}
		path = filepath.Join(dir, ".env")
	}
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	vars, err := appprofile.LoadDotenv(path)
	if err != nil {
		return nil
	}
	return vars
}
