package sqlstore

import (
	"strconv"
	"strings"
)

func itoa(n int) string { return strconv.Itoa(n) }

// dialect holds what differs between the three databases, side by side.
// Queries are written with ? placeholders and rebound by sqlx.
type dialect struct {
	name string
	// quote quotes an identifier that identRE already validated.
	quote func(string) string
	// likeOp is the case-insensitive LIKE: MySQL's default collation and
	// SQLite's LIKE already ignore ASCII case; PostgreSQL needs ILIKE.
	likeOp string
	// payloadHead selects the first n characters of a text column.
	head func(col string, n int) string
	// topException selects the text after the last "\n\nNext " separator
	// (the thrown exception) so a listing never transfers whole chains.
	// It takes the separator as a bound argument. Empty when the dialect
	// has no such function and Go must split.
	topException func(col string) string
	// columnsQuery lists (name, nullable) of a table in the current schema.
	columnsQuery string
}

// dialectFor returns the dialect of a driver name.
func dialectFor(driver string) (dialect, bool) {
	switch driver {
	case "postgres":
		return dialect{
			name:   "postgres",
			quote:  func(s string) string { return `"` + s + `"` },
			likeOp: "ILIKE",
			head:   func(col string, n int) string { return "left(" + col + ", " + itoa(n) + ")" },
			// split_part with a negative field counts from the end (PostgreSQL 14+).
			topException: func(col string) string { return "split_part(" + col + ", ?, -1)" },
			columnsQuery: `SELECT column_name, is_nullable = 'YES' FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ?`,
		}, true
	case "mysql":
		return dialect{
			name:         "mysql",
			quote:        func(s string) string { return "`" + s + "`" },
			likeOp:       "LIKE",
			head:         func(col string, n int) string { return "LEFT(" + col + ", " + itoa(n) + ")" },
			topException: func(col string) string { return "SUBSTRING_INDEX(" + col + ", ?, -1)" },
			columnsQuery: `SELECT column_name, is_nullable = 'YES' FROM information_schema.columns
			WHERE table_schema = DATABASE() AND table_name = ?`,
		}, true
	case "sqlite":
		return dialect{
			name:         "sqlite",
			quote:        func(s string) string { return `"` + s + `"` },
			likeOp:       "LIKE",
			head:         func(col string, n int) string { return "substr(" + col + ", 1, " + itoa(n) + ")" },
			columnsQuery: `SELECT name, "notnull" = 0 FROM pragma_table_info(?)`,
		}, true
	}
	return dialect{}, false
}

// likeEscaper escapes LIKE wildcards with '!' as the escape character, which
// means the same thing on all three databases (a backslash does not).
var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

func likeContains(s string) string { return "%" + likeEscaper.Replace(s) + "%" }
