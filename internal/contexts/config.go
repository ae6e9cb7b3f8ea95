// Package contexts reads jobtriage's own configuration file: named contexts,
// one per Laravel app (its directory or DSNs, Redis, timezone, notifiers,
// how to mark production), and the current one.
//
// The file is TOML, decoded strictly: an unknown key or a value that does
// not fit is an error naming file:line. Precedence, applied by the caller:
// flags > environment > context > the app's own profile (.env, config/*.php).
// The environment and the user's directories come in as arguments.
package contexts

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage/redact"
)

// Environment variables the caller reads for Locate and Select.
const (
	EnvConfig  = "JOBTRIAGE_CONFIG"
	EnvContext = "JOBTRIAGE_CONTEXT"
)

// maxFileSize bounds the configuration file read into memory.
const maxFileSize = 1 << 20

// Colours a context may be marked with.
var colors = []string{"red", "yellow", "green", "blue", "magenta", "cyan"}

// ColorProduction is a production context's colour when it names none.
const ColorProduction = "red"

// nameRE is a context name: typed on command lines, shown in prompts.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// File is the decoded configuration file.
type File struct {
	Path string // "" when there is no file
	// CurrentContext is used when neither --context nor JOBTRIAGE_CONTEXT
	// names one.
	CurrentContext string
	Contexts       []Context // sorted by name
	// Exposed: the file holds a secret (a DSN password, a notifier) and
	// its group or world may read it.
	Exposed bool
}

// Context is one app, decoded from the file's [contexts.NAME] table.
type Context struct {
	Name string `toml:"-"`
	// App is the Laravel app's directory and EnvFile its .env (absolute; a
	// relative path in the file is relative to the file's directory).
	App     string `toml:"app"`
	EnvFile string `toml:"env-file"`
	// DSN, JobsDSN, FailedTable, JobsTable, Timezone: as the flags of the
	// same names.
	DSN         string `toml:"dsn"`
	JobsDSN     string `toml:"jobs-dsn"`
	FailedTable string `toml:"failed-table"`
	JobsTable   string `toml:"jobs-table"`
	Timezone    string `toml:"timezone"`
	// Redis replaces the host, port, credentials and database of every
	// Redis queue connection of the app (redis:// or rediss:// URL).
	Redis string `toml:"redis"`
	Label string `toml:"label"` // the name for humans ("Shop EU")
	// Production marks a context whose writes hurt: every prompt and
	// write summary says so, in Color on a terminal.
	Production bool `toml:"production"`
	// Color is one of red, yellow, green, blue, magenta, cyan ("" = none,
	// or ColorProduction for a production context).
	Color string `toml:"color"`
	// Notify are the watcher's channels, as the monitor flags of the same names.
	Notify Notify `toml:"notify"`
	Line   int    `toml:"-"` // where the context's table starts in the file
}

// Notify are a context's notification channels (secrets), those of
// alerts/notify's Channels.
type Notify struct {
	SlackWebhook        string `toml:"slack-webhook"`
	WebhookURL          string `toml:"webhook-url"`
	PagerDutyRoutingKey string `toml:"pagerduty-routing-key"`
	Command             string `toml:"command"`
}

// Marker is the context's plain-text mark: name, label and, for
// production, "[PRODUCTION]".
func (c Context) Marker() string {
	s := "context " + c.Name
	if c.Label != "" && c.Label != c.Name {
		s += " (" + c.Label + ")"
	}
	if c.Production {
		s += " [PRODUCTION]"
	}
	return s
}

// DisplayColor is the colour the context is marked with ("" for none).
func (c Context) DisplayColor() string {
	if c.Color == "" && c.Production {
		return ColorProduction
	}
	return c.Color
}

// Redacted is the context with every secret masked, for `context show`.
func (c Context) Redacted() Context {
	r := c
	r.DSN = redactDSN(c.DSN)
	r.JobsDSN = redactDSN(c.JobsDSN)
	r.Redis = redactURL(c.Redis)
	r.Notify = Notify{
		SlackWebhook:        mask(c.Notify.SlackWebhook),
		WebhookURL:          redactURL(c.Notify.WebhookURL),
		PagerDutyRoutingKey: mask(c.Notify.PagerDutyRoutingKey),
		Command:             redactCommand(c.Notify.Command),
	}
	return r
}

// redactCommand keeps the program and masks its arguments (a token, maybe).
func redactCommand(s string) string {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return ""
	}
	out := redact.Text(fields[0])
	if len(fields) > 1 {
		out += " " + masked
	}
	return out
}

const masked = "****"

func mask(s string) string {
	if s == "" {
		return ""
	}
	return masked
}

func redactDSN(s string) string {
	if s == "" {
		return ""
	}
	t, err := appprofile.ParseDSN(s)
	if err != nil {
		return masked
	}
	return t.Redacted()
}

// redactURL keeps a URL's scheme and host and masks its credentials, path
// and query (a webhook's path is its secret).
func redactURL(s string) string {
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return masked
	}
	out := u.Scheme + "://"
	if u.User != nil {
		out += masked + "@"
	}
	out += u.Host
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		out += "/" + masked
	}
	return out
}

func (f *File) Context(name string) (Context, bool) {
	for _, c := range f.Contexts {
		if c.Name == name {
			return c, true
		}
	}
	return Context{}, false
}

func (f *File) Names() []string {
	out := make([]string, len(f.Contexts))
	for i, c := range f.Contexts {
		out[i] = c.Name
	}
	return out
}

// Locate is the configuration file's path: --config, JOBTRIAGE_CONFIG,
// $XDG_CONFIG_HOME/jobtriage/config.toml or $HOME/.config/jobtriage/config.toml.
// explicit: the path was asked for, so a missing file is an error.
func Locate(flag string, getenv func(string) string) (path string, explicit bool) {
	if flag != "" {
		return flag, true
	}
	if p := getenv(EnvConfig); p != "" {
		return p, true
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		// XDG: a relative value is invalid.
		home := getenv("HOME")
		if home == "" {
			return "", false
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "jobtriage", "config.toml"), false
}

// ErrNoFile is Load's error for a missing explicit path.
var ErrNoFile = errors.New("no such configuration file")

// Load reads and validates the file at path; a missing one not asked for
// explicitly is an empty File.
func Load(path string, explicit bool) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	data, err := readBounded(path)
	if errors.Is(err, os.ErrNotExist) {
		if explicit {
			return nil, fmt.Errorf("%s: %w", path, ErrNoFile)
		}
		return &File{}, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := Parse(path, data)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o077 != 0 {
		f.Exposed = slices.ContainsFunc(f.Contexts, Context.hasSecret)
	}
	return f, nil
}

func (c Context) hasSecret() bool {
	for _, dsn := range []string{c.DSN, c.JobsDSN} {
		if t, err := appprofile.ParseDSN(dsn); err == nil && t.Password != "" {
			return true
		}
	}
	if r, err := ParseRedis(c.Redis); c.Redis != "" && err == nil && r.Password != "" {
		return true
	}
	return c.Notify != Notify{}
}

func readBounded(path string) ([]byte, error) { return appprofile.ReadBounded(path, maxFileSize) }

type fileTOML struct {
	CurrentContext string             `toml:"current-context"`
	Contexts       map[string]Context `toml:"contexts"`
}

// Parse decodes and validates a file's bytes; path names it in errors and
// anchors relative paths.
func Parse(path string, data []byte) (*File, error) {
	var raw fileTOML
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, decodeError(path, err)
	}
	lines := keyLines(data)
	// at names a key's line, or its nearest enclosing table's (an inline
	// table's keys have none).
	at := func(key ...string) string {
		for n := len(key); n > 0; n-- {
			if l := lines[strings.Join(key[:n], "\x00")]; l > 0 {
				return path + ":" + strconv.Itoa(l)
			}
		}
		return path
	}
	f := &File{Path: path, CurrentContext: raw.CurrentContext}
	base := filepath.Dir(path)
	for name, c := range raw.Contexts {
		c.Name, c.Line = name, lines[strings.Join([]string{"contexts", name}, "\x00")]
		if err := c.validate(func(key string) string { return at("contexts", name, key) }, at("contexts", name)); err != nil {
			return nil, err
		}
		if c.App != "" && !filepath.IsAbs(c.App) {
			c.App = filepath.Join(base, c.App)
		}
		if c.EnvFile != "" && !filepath.IsAbs(c.EnvFile) {
			c.EnvFile = filepath.Join(base, c.EnvFile)
		}
		f.Contexts = append(f.Contexts, c)
	}
	sort.Slice(f.Contexts, func(i, j int) bool { return f.Contexts[i].Name < f.Contexts[j].Name })
	if f.CurrentContext != "" {
		if _, ok := f.Context(f.CurrentContext); !ok {
			return nil, fmt.Errorf("%s: current-context %q names no context (have: %s)", at("current-context"),
				f.CurrentContext, strings.Join(f.Names(), ", "))
		}
	}
	return f, nil
}

func decodeError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		more := ""
		if n := len(strict.Errors) - 1; n > 0 {
			more = fmt.Sprintf(" (and %d more)", n)
		}
		return fmt.Errorf("%s:%d: unknown key %q%s", path, row, strings.Join(e.Key(), "."), more)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return fmt.Errorf("%s:%d: %s", path, row, de.Error())
	}
	return fmt.Errorf("%s: %v", path, err)
}

// validate checks one context; at names a key's line, here the table's.
func (c *Context) validate(at func(key string) string, here string) error {
	if !nameRE.MatchString(c.Name) {
		return fmt.Errorf("%s: context name %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", here, c.Name)
	}
	if c.App == "" && c.DSN == "" {
		return fmt.Errorf("%s: context %s needs app (the Laravel directory) or dsn", here, c.Name)
	}
	for _, d := range []struct{ key, value string }{{"dsn", c.DSN}, {"jobs-dsn", c.JobsDSN}} {
		if d.value == "" {
			continue
		}
		if _, err := appprofile.ParseDSN(d.value); err != nil {
			return fmt.Errorf("%s: %s: %v", at(d.key), d.key, err)
		}
	}
	if c.Timezone != "" {
		if _, err := time.LoadLocation(c.Timezone); err != nil {
			return fmt.Errorf("%s: timezone %q: not a known IANA zone", at("timezone"), c.Timezone)
		}
	}
	if c.Redis != "" {
		if _, err := ParseRedis(c.Redis); err != nil {
			return fmt.Errorf("%s: redis: %v", at("redis"), err)
		}
	}
	if c.Color != "" && !slices.Contains(colors, c.Color) {
		return fmt.Errorf("%s: color %q: use one of %s", at("color"), c.Color, strings.Join(colors, ", "))
	}
	if strings.ContainsAny(c.Label, "\x00\r\n\x1b") {
		return fmt.Errorf("%s: label: no control characters", at("label"))
	}
	for _, u := range []struct{ key, value string }{{"slack-webhook", c.Notify.SlackWebhook}, {"webhook-url", c.Notify.WebhookURL}} {
		if u.value == "" {
			continue
		}
		if p, err := url.Parse(u.value); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return fmt.Errorf("%s.%s: want an http(s) URL", at("notify"), u.key)
		}
	}
	return nil
}

// Redis is a context's Redis override.
type Redis struct {
	Host     string
	Port     int
	Username string
	Password string
	DB       int // -1 when the URL names none: the connection's own is kept
	TLS      bool
}

const defaultRedisPort = 6379

// ParseRedis parses redis://[user:password@]host[:port][/db] (rediss:// for
// TLS). Errors never repeat the URL, which may carry a password.
func ParseRedis(s string) (Redis, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Redis{}, errors.New("not a URL")
	}
	r := Redis{Host: u.Hostname(), Port: defaultRedisPort, DB: -1}
	switch u.Scheme {
	case "redis":
	case "rediss":
		r.TLS = true
	default:
		return Redis{}, errors.New("want redis:// or rediss://")
	}
	if r.Host == "" {
		return Redis{}, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		if r.Port, err = strconv.Atoi(p); err != nil || r.Port <= 0 || r.Port > 65535 {
			return Redis{}, errors.New("bad port")
		}
	}
	if u.User != nil {
		r.Username = u.User.Username()
		r.Password, _ = u.User.Password()
		if _, has := u.User.Password(); !has {
			// redis://secret@host: the one part is the password (AUTH).
			r.Username, r.Password = "", u.User.Username()
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		if r.DB, err = strconv.Atoi(db); err != nil || r.DB < 0 {
			return Redis{}, errors.New("the path must be a database number")
		}
	}
	return r, nil
}
