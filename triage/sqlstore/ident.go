package sqlstore

import (
	"fmt"
	"regexp"
	"strings"
)

// identRE is one unquoted SQL identifier as Laravel's migrations name
// tables, including a table prefix ("tenant1_failed_jobs"). Names reach SQL
// text, so anything else is refused rather than quoted.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_$]{0,63}$`)

// tableName is a table as the configuration names it: "failed_jobs" or
// schema-qualified "app.failed_jobs" (a PostgreSQL schema, a MySQL database,
// an attached SQLite database).
type tableName struct {
	schema string // "" = the connection's search_path / database / main
	name   string
}

// parseTableName accepts "table" and "schema.table", each part an identRE
// identifier.
func parseTableName(s string) (tableName, error) {
	schema, name, qualified := strings.Cut(s, ".")
	if !qualified {
		schema, name = "", s
	}
	if (qualified && !identRE.MatchString(schema)) || !identRE.MatchString(name) {
		return tableName{}, fmt.Errorf("invalid table name %q: use letters, digits and underscores, optionally schema.table", s)
	}
	return tableName{schema: schema, name: name}, nil
}

// String is the name as configured.
func (t tableName) String() string {
	if t.schema == "" {
		return t.name
	}
	return t.schema + "." + t.name
}

// quoted is the name for SQL text in dialect d: "app"."failed_jobs" or
// `app`.`failed_jobs`. Both parts passed identRE, so they need no escaping.
func (t tableName) quoted(d dialect) string {
	if t.schema == "" {
		return d.quote(t.name)
	}
	return d.quote(t.schema) + "." + d.quote(t.name)
}

// ParseSearchPath splits a Laravel pgsql "search_path" (or legacy
// "schema") string the way PostgresConnector::parseSearchPath does since
// Laravel 9: names are separated by commas or spaces, and quotes around them
// are dropped. "$user" stays a name of its own.
func ParseSearchPath(s string) []string {
	return searchPathWordRE.FindAllString(s, -1)
}

var searchPathWordRE = regexp.MustCompile(`[^\s,"']+`)

// searchPathValue renders schemas as the value of PostgreSQL's search_path
// the way Laravel's "set search_path to" statement does: every name in
// double quotes ("$user" included, which PostgreSQL then expands). Quotes
// and blanks around a name are trimmed, as Laravel trims them from array
// entries; an entry holding several names is split like a search_path
// string.
func searchPathValue(schemas []string) string {
	var names []string
	for _, s := range schemas {
		names = append(names, ParseSearchPath(s)...)
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = `"` + strings.ReplaceAll(n, `"`, `""`) + `"`
	}
	return strings.Join(quoted, ", ")
}

// conninfoQuote quotes a value for lib/pq's key=value connection string:
// single quotes around it, a backslash before ' and \. Every value is quoted,
// so spaces, '=', '@' and '/' in a password or a socket directory are
// ordinary characters and never change how the string parses.
func conninfoQuote(v string) string { return "'" + conninfoEscaper.Replace(v) + "'" }

var conninfoEscaper = strings.NewReplacer(`'`, `\'`, `\`, `\\`)

// mysqlTimezoneRE admits what MySQL's time_zone accepts without needing
// escaping: SYSTEM, an offset (+02:00) or a zone name (Europe/Kyiv, UTC).
var mysqlTimezoneRE = regexp.MustCompile(`^(?:SYSTEM|[+-]\d{1,2}:\d{2}|[A-Za-z][A-Za-z0-9_+\-]*(?:/[A-Za-z0-9_+\-]+)*)$`)
