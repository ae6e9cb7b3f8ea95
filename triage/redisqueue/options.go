package redisqueue

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options say where the queue connection's Redis is, as config/database.php's
// redis connection does once its url is applied (appprofile reads it), plus
// the app's key prefix.
type Options struct {
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

// resolve fills in the defaults. Its errors never contain the password.
func (o Options) resolve() (Options, error) {
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
