package appprofile

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/triage/redact"
)

// Target is one database to open, independent of how it was described.
type Target struct {
	Driver   string // "postgres" | "mysql" | "sqlite"
	Host     string
	Port     int
	Database string
	User     string
	Password string
	Socket   string // MySQL unix socket (DB_SOCKET, ?unix_socket=)
	Path     string // SQLite file
	Params   map[string]string
}

// Redacted describes the target like a URL, without the password or any
// parameter value that looks like a secret.
func (t Target) Redacted() string {
	var b strings.Builder
	if t.Driver == "sqlite" {
		b.WriteString("sqlite:")
		b.WriteString(t.Path)
	} else {
		b.WriteString(t.Driver)
		b.WriteString("://")
		if t.User != "" {
			b.WriteString(url.PathEscape(t.User))
			if t.Password != "" {
				b.WriteString(":xxxxx")
			}
			b.WriteString("@")
		}
		host := t.Host
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		b.WriteString(host)
		if t.Port != 0 {
			b.WriteString(":" + strconv.Itoa(t.Port))
		}
		b.WriteString("/")
		b.WriteString(url.PathEscape(t.Database))
	}
	q := url.Values{} // Encode sorts the keys
	for k, v := range t.Params {
		if isSecretParam(k) {
			v = "xxxxx"
		}
		q.Set(k, v)
	}
	if t.Socket != "" {
		q.Set("unix_socket", t.Socket)
	}
	if len(q) > 0 {
		b.WriteString("?" + q.Encode())
	}
	return redact.Text(b.String(), t.Password)
}

// String is Redacted, so that printing a Target with %v or %s is safe.
func (t Target) String() string { return t.Redacted() }

// GoString keeps %#v safe too.
func (t Target) GoString() string { return "appprofile.Target(" + t.Redacted() + ")" }

func isSecretParam(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "pass") || strings.Contains(k, "secret") || strings.Contains(k, "token")
}

// ourDrivers maps a Laravel driver (after driverAliases) to ours; sqlsrv
// and the others jobtriage cannot speak are absent.
var ourDrivers = map[string]string{"mysql": "mysql", "mariadb": "mysql", "pgsql": "postgres", "sqlite": "sqlite"}

// driverAliases are ConfigurationUrlParser::$driverAliases (the database ones).
var driverAliases = map[string]string{"mssql": "sqlsrv", "mysql2": "mysql", "postgres": "pgsql", "postgresql": "pgsql", "sqlite3": "sqlite"}

func laravelDriverFor(scheme string) string {
	s := strings.ToLower(scheme)
	return cmp.Or(driverAliases[s], s)
}

var defaultPorts = map[string]int{"postgres": 5432, "mysql": 3306}

// unsupportedDriverError names the driver (never secret) and the supported ones.
func unsupportedDriverError(what, driver string) error {
	return fmt.Errorf("%s names database driver %s, which jobtriage does not support (use pgsql/postgres, mysql/mariadb or sqlite)",
		what, quoteShort(driver))
}

// quoteShort quotes untrusted text for a message: Go-escaped (inert in a
// terminal) and cut short.
func quoteShort(s string) string {
	const max = 64
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

var urlScheme = regexp.MustCompile(`\A([A-Za-z][A-Za-z0-9+.\-]*):`)

// isBareSQLitePath recognises `--dsn ./database/app.sqlite`.
func isBareSQLitePath(s string) bool {
	if strings.Contains(s, "://") {
		return false
	}
	l := strings.ToLower(s)
	return strings.HasSuffix(l, ".sqlite") || strings.HasSuffix(l, ".sqlite3") || strings.HasSuffix(l, ".db")
}

// ParseDSN parses a jobtriage DSN: a postgres://, postgresql://, pgsql://,
// mysql://, mariadb:// or mysql2:// URL (user and password URL-encoded;
// query parameters in Params, unix_socket/socket in Socket; host and port
// default; the database required), or sqlite:PATH, sqlite://PATH, or a bare
// path ending in .sqlite, .sqlite3 or .db. Errors never repeat the DSN.
func ParseDSN(s string) (Target, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Target{}, errors.New("empty DSN")
	}
	if strings.ContainsAny(s, "\x00\n\r") {
		return Target{}, errors.New("DSN contains a NUL or line break")
	}
	m := urlScheme.FindStringSubmatch(s)
	if m == nil || len(m[1]) == 1 { // "C:\..." is a Windows path, not a scheme
		if isBareSQLitePath(s) {
			return Target{Driver: "sqlite", Path: s}, nil
		}
		return Target{}, errors.New("DSN has no scheme: want postgres://, mysql://, sqlite:PATH or a path ending in .sqlite")
	}
	scheme := strings.ToLower(m[1])
	if scheme == "sqlite" || scheme == "sqlite3" {
		return parseSQLiteDSN(s[len(m[0]):])
	}
	if !strings.HasPrefix(s[len(m[0]):], "//") {
		return Target{}, errors.New("DSN must look like driver://user:password@host:port/database or sqlite:PATH")
	}
	ours, ok := ourDrivers[laravelDriverFor(scheme)]
	if !ok {
		return Target{}, unsupportedDriverError("DSN", scheme)
	}
	parts, err := splitDatabaseURL(s)
	if err != nil {
		return Target{}, fmt.Errorf("DSN: %w", err)
	}
	t := Target{Driver: ours, Host: parts.host, Port: parts.port, Database: parts.database,
		User: parts.user, Password: parts.pass, Params: parts.params}
	t.Socket = takeSocketParam(t.Params)
	if t.Host == "" && t.Socket == "" {
		t.Host = "127.0.0.1"
	}
	if t.Port == 0 {
		t.Port = defaultPorts[ours]
	}
	if t.Database == "" {
		return Target{}, fmt.Errorf("DSN names no database: add /DATABASE after the host (%s)", t.Redacted())
	}
	return t, nil
}

// parseSQLiteDSN reads what follows "sqlite:". '?' and '#' are part of the
// file name: the store takes no SQLite parameters, and cutting a query off
// "q?mode=ro.sqlite" would open (and write to) "q".
func parseSQLiteDSN(rest string) (Target, error) {
	path := rawURLDecode(strings.TrimPrefix(rest, "//"))
	if path == "" {
		return Target{}, errors.New("sqlite DSN names no file: use sqlite:PATH or sqlite:///absolute/path")
	}
	return Target{Driver: "sqlite", Path: path}, nil
}

func takeSocketParam(params map[string]string) string {
	for _, k := range []string{"unix_socket", "socket"} {
		if v, ok := params[k]; ok {
			delete(params, k)
			return v
		}
	}
	return ""
}

// urlParts is a database URL split as parse_url and ConfigurationUrlParser
// split it; has* says the URL set that part: only those override DB_* keys.
type urlParts struct {
	scheme                    string
	host, user, pass          string
	database                  string
	port                      int
	hasHost, hasUser, hasPass bool
	hasDatabase, hasPort      bool
	params                    map[string]string
}

// splitDatabaseURL parses [scheme:]//[user[:pass]@]host[:port][/database][?query].
// Unlike net/url it accepts any byte in the password, as PHP does, and its
// errors never include the input.
func splitDatabaseURL(s string) (urlParts, error) {
	var p urlParts
	if m := urlScheme.FindStringSubmatch(s); m != nil {
		p.scheme = m[1]
		s = s[len(m[0]):]
	}
	if !strings.HasPrefix(s, "//") {
		return p, errors.New("URL must contain //host after the scheme")
	}
	s = s[2:]
	if i := strings.IndexByte(s, '#'); i >= 0 {
		// A '#' in the user info would cut the password: malformed, as in PHP.
		if at := strings.LastIndexByte(s, '@'); at > i {
			return p, errors.New("URL is malformed: a '#' in the password must be written %23")
		}
		s = s[:i]
	}
	authority, rest := s, ""
	if i := strings.IndexAny(s, "/?"); i >= 0 {
		authority, rest = s[:i], s[i:]
	}
	hostport := authority
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo := authority[:at]
		hostport = authority[at+1:]
		user, pass, hasPass := strings.Cut(userinfo, ":")
		p.user, p.hasUser = phpNativeString(rawURLDecode(user))
		if hasPass {
			p.pass, p.hasPass = phpNativeString(rawURLDecode(pass))
		}
	}
	host, port, err := splitHostPort(hostport)
	if err != nil {
		return p, err
	}
	if host != "" {
		p.host, p.hasHost = phpNativeString(rawURLDecode(host))
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 {
			return p, errors.New("URL is malformed: the port must be a number up to 65535 (percent-encode ':' '/' '?' '#' '@' in the password)")
		}
		p.port, p.hasPort = n, true
	}
	path, query, _ := strings.Cut(rest, "?")
	if path != "" && path != "/" {
		p.database, p.hasDatabase = phpNativeString(rawURLDecode(path[1:]))
		if strings.Contains(p.database, "@") && p.hasDatabase {
			return p, errors.New("URL is malformed: the database name contains '@' (percent-encode '/' in the password)")
		}
	}
	if query != "" {
		p.params = parseQuery(query)
	}
	return p, nil
}

func splitHostPort(hostport string) (host, port string, err error) {
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return "", "", errors.New("URL is malformed: unclosed '[' in the host")
		}
		host, after := hostport[1:end], hostport[end+1:]
		if after == "" {
			return host, "", nil
		}
		if after[0] != ':' {
			return "", "", errors.New("URL is malformed: unexpected text after ']' in the host")
		}
		return host, after[1:], nil
	}
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		return hostport[:i], hostport[i+1:], nil
	}
	return hostport, "", nil
}

// phpNativeString is ConfigurationUrlParser::parseStringsToNativeTypes for a
// component used as a string: JSON null drops it (the DB_* key stays),
// booleans are "1"/"", JSON strings lose their quotes, numbers keep their text.
func phpNativeString(s string) (string, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return s, true
	}
	switch x := v.(type) {
	case nil:
		return "", false
	case bool:
		if x {
			return "1", true
		}
		return "", true
	case string:
		return x, true
	}
	return s, true
}

// rawURLDecode is PHP's rawurldecode: %XX decodes; '+' and broken escapes stay.
func rawURLDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// parseQuery is a flat parse_str: '+' is a space, %XX decodes, last key wins.
func parseQuery(q string) map[string]string {
	params := map[string]string{}
	for _, pair := range strings.Split(q, "&") {
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k = rawURLDecode(strings.ReplaceAll(k, "+", " "))
		if k == "" {
			continue
		}
		params[k] = rawURLDecode(strings.ReplaceAll(v, "+", " "))
	}
	return params
}
