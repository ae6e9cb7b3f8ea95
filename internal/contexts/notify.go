package contexts

import (
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

// ResolveNotify picks each channel's setting: the flag, the environment, the
// context c (nil for none), else the app's .env: envFile (--env-file), the
// context's, its app directory's or the working directory's. A missing or
// unreadable .env holds no setting.
func ResolveNotify(flags Notify, getenv func(string) string, c *Context, envFile string, getwd func() (string, error)) Notify {
	var cn Notify
	if c != nil {
		cn = c.Notify
	}
	m := Merge(c, Settings{EnvFile: envFile}, nil)
	if m.EnvFile == "" && m.Dir == "" {
		m.Dir, _ = getwd()
	}
	if m.EnvFile == "" && m.Dir != "" {
		m.EnvFile = filepath.Join(m.Dir, ".env")
	}
	dotenv, _ := appprofile.LoadDotenv(m.EnvFile) // nil unless a readable regular file
	pick := func(flag, env, fromContext string) string {
		switch v := getenv(env); {
		case flag != "":
			return flag
		case v != "":
			return v
		case fromContext != "":
			return fromContext
		}
		v, _ := appprofile.Cast(dotenv[env])
		return v
	}
	return Notify{
		SlackWebhook:        pick(flags.SlackWebhook, EnvSlackWebhook, cn.SlackWebhook),
		WebhookURL:          pick(flags.WebhookURL, EnvWebhookURL, cn.WebhookURL),
		PagerDutyRoutingKey: pick(flags.PagerDutyRoutingKey, EnvPagerDutyKey, cn.PagerDutyRoutingKey),
		Command:             pick(flags.Command, EnvNotifyCommand, cn.Command),
	}
}
