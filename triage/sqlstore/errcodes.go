package sqlstore

import (
	"errors"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
)

// errCodes names one kind of refusal in each driver's terms: MySQL's error
// numbers, PostgreSQL's SQLSTATE codes or classes (a code's prefix), and
// words of SQLite's messages.
type errCodes struct {
	mysql  []uint16
	pg     []string
	sqlite []string
}

var (
	// rowData is an insert or delete refused for what one row holds rather
	// than for the table or the session: PostgreSQL's data exceptions,
	// integrity violations and a trigger's RAISE EXCEPTION (P0001); MySQL's
	// NULL in a NOT NULL column (1048), out of range (1264), truncated
	// (1265), incorrect value or string (1292, 1366), data too long (1406),
	// invalid JSON (3140), CHECK failures (3819, MariaDB 4025), a trigger's
	// SIGNAL (1644) and a row still referenced (1451); SQLite's constraint
	// failures (a trigger's RAISE too) and oversized values.
	rowData = errCodes{mysql: []uint16{1048, 1264, 1265, 1292, 1366, 1406, 3140, 3819, 4025, 1644, 1451},
		pg: []string{"22", "23", "P0001"}, sqlite: []string{"constraint failed", "too big"}}
	// permissionDenied: insufficient_privilege; MySQL's table (1142),
	// column (1143) and database (1044) denials.
	permissionDenied = errCodes{mysql: []uint16{1142, 1143, 1044}, pg: []string{"42501"}}
	// deadlock: a deadlock or a lock wait timeout, and SQLite's busy database.
	deadlock = errCodes{mysql: []uint16{1213, 1205}, pg: []string{"40P01", "40001"},
		sqlite: []string{"SQLITE_BUSY", "database is locked"}}
	uniqueViolation = errCodes{mysql: []uint16{1062}, pg: []string{"23505"}, sqlite: []string{"UNIQUE constraint failed"}}
	// duplicateObject: PostgreSQL's duplicate_object and duplicate_table.
	duplicateObject = errCodes{pg: []string{"42710", "42P07"}}
)

func (c errCodes) match(err error) bool {
	if err == nil {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return slices.Contains(c.mysql, me.Number)
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		return slices.ContainsFunc(c.pg, func(code string) bool { return strings.HasPrefix(string(pe.Code), code) })
	}
	msg := err.Error()
	return slices.ContainsFunc(c.sqlite, func(w string) bool { return strings.Contains(msg, w) })
}
