package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jobtriage/jobtriage/triage"
)

// column is one column as the catalog describes it.
type column struct {
	nullable bool
	// typ is the declared type in lower case: PostgreSQL's format_type
	// ("bigint", "character varying(255)", "jsonb"), MySQL's column_type
	// ("bigint(20) unsigned", "longtext"), SQLite's declared type.
	typ string
}

// columns returns the table's columns by lower-case name; an empty map means
// the table does not exist. An unqualified name is looked up where the
// session would find it: PostgreSQL's search_path, MySQL's current
// database, SQLite's main (or temp) database.
func (s *Store) columns(ctx context.Context, t tableName) (map[string]column, error) {
	rows, err := s.db.QueryContext(ctx, s.db.Rebind(s.d.columnsSQL), s.d.catalogArgs(t)...)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of %s on %s: %s", t, s.ep.Redacted(), scrub(err, s.ep))
	}
	defer rows.Close()
	cols := map[string]column{}
	for rows.Next() {
		var name, typ string
		var nullable bool
		if err := rows.Scan(&name, &nullable, &typ); err != nil {
			return nil, fmt.Errorf("reading the columns of %s: %s", t, scrub(err, s.ep))
		}
		cols[strings.ToLower(name)] = column{nullable: nullable, typ: strings.ToLower(strings.TrimSpace(typ))}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the columns of %s: %s", t, scrub(err, s.ep))
	}
	return cols, nil
}

// kind is what jobtriage needs a column to hold.
type kind int

const (
	kindInteger kind = iota // compared, ordered and bound as int64
	kindText                // read and written byte for byte, LIKE and left()
	kindTime                // Laravel's wall-clock failed_at
	kindUUID                // compared with a uuid string
)

// expected says what a column of kind k should be, for messages.
func (k kind) expected() string {
	return [...]string{kindInteger: "an integer column", kindText: "a text column (varchar/text/longtext)",
		kindTime: "a timestamp or datetime column", kindUUID: "a string or uuid column"}[k]
}

// accepts reports whether a column of declared type typ can serve as k on
// dialect d. SQLite keeps any value in any column, so only its id is
// checked (it must be the integer rowid alias, SQLite's first affinity
// rule: a declared type containing INT); the others are checked by type
// name (columnTypes).
func (d dialect) accepts(k kind, typ string) bool {
	if d.name == "sqlite" {
		return k != kindInteger || strings.Contains(strings.ToUpper(typ), "INT")
	}
	base := typ
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	return slices.Contains(d.columnTypes[k], base)
}

// why explains a rejected type where the reason is not obvious.
func why(k kind, typ string) string {
	switch {
	case k == kindText && (strings.HasPrefix(typ, "json")):
		return ": JSON columns re-encode the payload, and Laravel's payloads must stay byte for byte"
	case k == kindInteger:
		return ": jobtriage pages and addresses rows by integer id (Laravel's id())"
	case k == kindText && (strings.Contains(typ, "blob") || strings.Contains(typ, "binary") || typ == "bytea"):
		return ": binary columns cannot be searched as text"
	}
	return ""
}

// shape is the columns a table must have, and what each must hold.
type shape []struct {
	name string
	kind kind
}

// failedShape and jobsShape are the columns jobtriage reads and writes, and
// what each must hold (queue-spec §1.1, §1.2).
var (
	failedShape = shape{
		{"id", kindInteger}, {"connection", kindText}, {"queue", kindText},
		{"payload", kindText}, {"exception", kindText}, {"failed_at", kindTime},
	}
	jobsShape = shape{
		{"queue", kindText}, {"payload", kindText}, {"attempts", kindInteger},
		{"reserved_at", kindInteger}, {"available_at", kindInteger}, {"created_at", kindInteger},
	}
)

// checkShape returns an ErrSchema error naming every column of t that is
// missing or of a type jobtriage cannot use, or nil. The message is one
// line: "table failed_jobs: column id is uuid, want an integer column: …".
func (s *Store) checkShape(t tableName, cols map[string]column, want shape, laravel string) error {
	var missing, wrong []string
	for _, c := range want {
		col, ok := cols[c.name]
		if !ok {
			missing = append(missing, c.name)
			continue
		}
		if !s.d.accepts(c.kind, col.typ) {
			wrong = append(wrong, fmt.Sprintf("column %s is %s, want %s%s", c.name, col.typ, c.kind.expected(), why(c.kind, col.typ)))
		}
	}
	if len(missing) == 0 && len(wrong) == 0 {
		return nil
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, fmt.Sprintf("lacks the column(s) %s that Laravel's %s table has", strings.Join(missing, ", "), laravel))
	}
	parts = append(parts, wrong...)
	return fmt.Errorf("%w: table %s on %s: %s", triage.ErrSchema, t, s.ep.Redacted(), strings.Join(parts, "; "))
}

// lookedIn says where an unqualified table was looked for, for messages.
func (s *Store) lookedIn(t tableName) string {
	if t.schema == "" && s.d.name == "postgres" && len(s.ep.Schema) > 0 {
		return s.ep.Redacted() + " (search_path " + searchPathValue(s.ep.Schema) + ")"
	}
	return s.ep.Redacted()
}

// detectSchema checks that failed_jobs has the columns Laravel writes, of
// types jobtriage can use, and finds the id mode, so that every later query
// can rely on them. A jobs table of the wrong shape does not fail Open (an
// app may keep an unrelated "jobs" table and queue on Redis); it counts as
// no jobs table, and requireJobs explains why (jobsProblem).
func (s *Store) detectSchema(ctx context.Context, cfg Config, failed, jobs, batches tableName) error {
	s.schema = triage.Schema{
		Dialect:           s.d.name,
		FailedTable:       cfg.FailedTable,
		JobsTable:         cfg.JobsTable,
		ConcurrentBatches: s.d.concurrentBatches,
	}
	cols, err := s.columns(ctx, jobs)
	if err != nil {
		return err
	}
	if len(cols) > 0 {
		s.jobsProblem = s.checkShape(jobs, cols, jobsShape, "jobs")
	}
	s.schema.HasJobs = len(cols) > 0 && s.jobsProblem == nil
	if cfg.JobsOnly {
		return s.requireJobs()
	}
	if cols, err = s.columns(ctx, failed); err != nil {
		return err
	}
	if len(cols) == 0 {
		return fmt.Errorf("%w: table %q not found in %s; create it in the app with "+
			"`php artisan queue:failed-table && php artisan migrate` (Laravel 11+: make:queue-failed-table), "+
			"or name the table with --failed-table", triage.ErrMissingTable, cfg.FailedTable, s.lookedIn(failed))
	}
	if err := s.checkShape(failed, cols, failedShape, "failed_jobs"); err != nil {
		return err
	}
	if uuid, ok := cols["uuid"]; ok {
		if !s.d.accepts(kindUUID, uuid.typ) {
			return fmt.Errorf("%w: table %s on %s: column uuid is %s, want %s",
				triage.ErrSchema, failed, s.ep.Redacted(), uuid.typ, kindUUID.expected())
		}
		s.schema.IDMode = triage.IDModeUUID
		s.schema.UUIDNullable = uuid.nullable
	}
	bcols, err := s.columns(ctx, batches)
	s.schema.HasBatches = len(bcols) > 0
	return err
}

// requireJobs is the error for commands that need the jobs table.
func (s *Store) requireJobs() error {
	if s.schema.HasJobs {
		return nil
	}
	if s.jobsProblem != nil {
		return s.jobsProblem
	}
	return fmt.Errorf("%w: table %q not found in %s; create it in the app with "+
		"`php artisan queue:table && php artisan migrate` (Laravel 11+: make:queue-table), "+
		"or name the table with --jobs-table", triage.ErrMissingTable, s.schema.JobsTable, s.ep.Redacted())
}
