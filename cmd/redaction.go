package cmd

import (
	"strings"

	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// RedactFlags are --redact and --redact-keys.
type RedactFlags struct {
	On   bool
	Keys string
}

// redaction resolves whether what people read is masked (--redact,
// JOBTRIAGE_REDACT) and with which keys (--redact-keys, JOBTRIAGE_REDACT_KEYS,
// the default list); alert bodies always use the keys.
func (f *Factory) redaction() (bool, redact.Keys, error) {
	getenv := f.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	on := f.Redact.On
	if !on {
		switch v := strings.ToLower(strings.TrimSpace(getenv("JOBTRIAGE_REDACT"))); v {
		case "", "0", "false", "no", "off":
		case "1", "true", "yes", "on":
			on = true
		default:
			return false, redact.Keys{}, FlagErrorf("JOBTRIAGE_REDACT=%q: want 1 or 0", sanitize.Line(v))
		}
	}
	list, from := f.Redact.Keys, "--redact-keys"
	if list == "" {
		list, from = getenv("JOBTRIAGE_REDACT_KEYS"), "JOBTRIAGE_REDACT_KEYS"
	}
	if strings.TrimSpace(list) == "" {
		return on, redact.DefaultKeys(), nil
	}
	keys, err := redact.ParseKeys(list)
	if err != nil {
		return false, redact.Keys{}, FlagErrorf("%s: %v", from, err)
	}
	return on, keys, nil
}
