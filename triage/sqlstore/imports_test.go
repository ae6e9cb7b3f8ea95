package sqlstore_test

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// databasePackages are the database drivers and the SQL access layers a
// package uses when it talks to a database itself.
var databasePackages = map[string]bool{
	"database/sql":                   true,
	"github.com/jmoiron/sqlx":        true,
	"github.com/lib/pq":              true,
	"github.com/go-sql-driver/mysql": true,
	"modernc.org/sqlite":             true,
	"github.com/jackc/pgx/v5":        true,
	"github.com/jackc/pgx/v5/stdlib": true,
	"github.com/mattn/go-sqlite3":    true,
}

// sqlBaselines are the benchmark programs allowed to talk to a database
// themselves: each times hand-written SQL as the baseline jobtriage is
// measured against, which must not go through the store it is compared
// with. Seeding is not among the reasons: bench/seed and the demo go
// through sqlstore.Seeder.
var sqlBaselines = map[string]string{
	"github.com/jobtriage/jobtriage/bench/redisbaseline": "a bare SELECT/RPUSH/DELETE loop: the Redis retry baseline",
	"github.com/jobtriage/jobtriage/bench/sigindex":      "bare GROUP BY SQL: the signature index's baseline",
}

// TestOnlySQLStoreTalksToDatabases: no package outside triage/sqlstore
// (and its sqltest helpers) imports a database driver, sqlx or
// database/sql in its non-test files — the architecture's "no SQL outside
// sqlstore". Test files may (interop and stress drive real databases the
// way Laravel and a DBA would).
func TestOnlySQLStoreTalksToDatabases(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test lists the module's imports with the go command, which is not on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = filepath.Join("..", "..") // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/jobtriage/jobtriage/triage/sqlstore"
	seen := 0
	var offenders []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		seen++
		if pkg == self || strings.HasPrefix(pkg, self+"/") || strings.HasPrefix(pkg, "github.com/jobtriage/jobtriage/third_party/") {
			continue
		}
		if _, ok := sqlBaselines[pkg]; ok {
			continue
		}
		for _, imp := range fields[1:] {
			if databasePackages[imp] {
				offenders = append(offenders, pkg+" imports "+imp)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("go list saw %d packages; is the module root right?", seen)
	}
	sort.Strings(offenders)
	for _, o := range offenders {
		t.Errorf("%s: only triage/sqlstore talks to databases (add what it needs to sqlstore, e.g. the Seeder)", o)
	}
}
