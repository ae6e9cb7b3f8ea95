package redisqueue

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options say where the queue connection's Redis is, as config/database.php's
// redis connection does, plus the app's key prefix.
type Options struct {
	// URL (REDIS_URL: redis, tcp, rediss or tls) overrides the fields it
	// carries, as Laravel's ConfigurationUrlParser does, query options
	// (database, username, password, prefix, timeout) included.
	URL      string
	Host     string
	Port     int
	Username string
	Password string
	DB       int
	TLS      bool
	// Cluster talks to a Redis Cluster through this seed node; DB is then
	// ignored, and an untagged queue name gets a hash tag (Backend.QueueKey).
	Cluster bool
	// Prefix is the client key prefix (database.redis.options.prefix or the
	// connection's own), applied to keys only, never to values.
	Prefix string
	// MarkerTTL is how long a marker stops a re-run's push (0: DefaultMarkerTTL).
	MarkerTTL time.Duration
	// DialTimeout bounds connecting and the ping (0: DefaultDialTimeout).
	DialTimeout time.Duration
}

// Defaults of Options.
const (
	// DefaultHost and DefaultPort are Laravel's REDIS_HOST and REDIS_PORT.
	DefaultHost = "127.0.0.1"
	DefaultPort = 6379
	// DefaultMarkerTTL outlives a crashed run resumed after a weekend; it is
	// Horizon's default failed-job retention.
	DefaultMarkerTTL = 7 * 24 * time.Hour
	// DefaultDialTimeout is the connect timeout when Options leave it zero.
	DefaultDialTimeout = 5 * time.Second
)

// errMalformedURL never carries the URL itself: it may hold a password.
var errMalformedURL = errors.New("the Redis URL is malformed")

// resolve applies the URL over the fields and fills in the defaults. Its
// errors never contain the password.
func (o Options) resolve() (Options, error) {
	if o.URL != "" {
		var err error
		if o, err = o.applyURL(); err != nil {
			return o, err
		}
	}
	if o.Host == "" {
		o.Host = DefaultHost
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.Port < 0 || o.Port > 65535 {
		return o, fmt.Errorf("invalid Redis port %d", o.Port)
	}
	if o.DB < 0 {
		return o, fmt.Errorf("invalid Redis database %d", o.DB)
	}
	if o.MarkerTTL <= 0 {
		o.MarkerTTL = DefaultMarkerTTL
	}
	o.MarkerTTL = max(o.MarkerTTL, time.Second) // SET … EX counts whole seconds
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	return o, nil
}

// applyURL is ConfigurationUrlParser::parseConfiguration: the URL's
// components, then its query options, override the fields.
func (o Options) applyURL() (Options, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			// url.Error repeats the whole URL; its inner error does not.
			return o, fmt.Errorf("%w: %s", errMalformedURL, scrubText(ue.Err.Error(), o.Password, urlPassword(o.URL)))
		}
		return o, errMalformedURL
	}
	switch strings.ToLower(u.Scheme) {
	case "redis", "tcp":
		o.TLS = false
	case "rediss", "tls":
		o.TLS = true
	case "":
		return o, fmt.Errorf("%w: it has no scheme (want redis://, rediss://, tcp:// or tls://)", errMalformedURL)
	default:
		return o, fmt.Errorf("%w: unsupported scheme %q (want redis://, rediss://, tcp:// or tls://)", errMalformedURL, u.Scheme)
	}
	if h := u.Hostname(); h != "" {
		o.Host = h
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil {
			return o, fmt.Errorf("%w: invalid port %q", errMalformedURL, p)
		}
		o.Port = n
	}
	if u.User != nil {
		// parse_url reports an empty user for "redis://:secret@host", which
		// overrides the username with "" as in Laravel.
		o.Username = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			o.Password = pw
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil {
			return o, fmt.Errorf("%w: the path must be a database number, not %q", errMalformedURL, db)
		}
		o.DB = n
	}
	q := u.Query()
	for key, set := range map[string]func(string) error{
		"database": func(v string) error {
			n, err := strconv.Atoi(v)
			o.DB = n
			return err
		},
		"username": func(v string) error { o.Username = v; return nil },
		"password": func(v string) error { o.Password = v; return nil },
		"prefix":   func(v string) error { o.Prefix = v; return nil },
		"timeout": func(v string) error {
			// phpredis' connect timeout, in (fractional) seconds.
			f, err := strconv.ParseFloat(v, 64)
			if err == nil && f > 0 {
				o.DialTimeout = time.Duration(f * float64(time.Second))
			}
			return err
		},
	} {
		if !q.Has(key) {
			continue
		}
		if err := set(q.Get(key)); err != nil {
			return o, fmt.Errorf("%w: invalid %s option", errMalformedURL, key)
		}
	}
	return o, nil
}

// urlPassword digs the password out of a URL that url.Parse refused, so that
// it can be scrubbed from the parser's message.
func urlPassword(raw string) string {
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+len("://"):]
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return ""
	}
	info := rest[:at]
	if i := strings.IndexByte(info, ':'); i >= 0 {
		return info[i+1:]
	}
	return ""
}

// endpoint names the server for messages, never the credentials.
func (o Options) endpoint() string {
	scheme := "redis"
	if o.TLS {
		scheme = "rediss"
	}
	addr := o.addr()
	if o.Cluster {
		return scheme + "://" + addr + " (cluster)"
	}
	return scheme + "://" + addr + "/" + strconv.Itoa(o.DB)
}

// addr is host:port.
func (o Options) addr() string { return net.JoinHostPort(o.Host, strconv.Itoa(o.Port)) }

// scrubText removes every given secret from a message, as typed and in the
// escaped forms a URL would carry it.
func scrubText(msg string, secrets ...string) string {
	for _, s := range secrets {
		if s == "" {
			continue
		}
		for _, form := range []string{s, url.QueryEscape(s), url.PathEscape(s), url.UserPassword("", s).String()} {
			if form != "" && form != ":" {
				msg = strings.ReplaceAll(msg, form, "****")
			}
		}
	}
	return msg
}
