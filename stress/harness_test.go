package stress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// seedRows is the size of the backlog every heavy test moves: many batches
// of retry's triage.WriteBatch (TestBacklogsSpanBatches), so kills land in
// the middle of the run, not near its ends.
const seedRows = 100_000

// runTimeout bounds one jobtriage process: a full retry of seedRows takes
// seconds; a hang must fail the test, not the CI job.
const runTimeout = 3 * time.Minute

// seedEnv overrides the random seed of the kill schedule, to replay a run.
const seedEnv = "JOBTRIAGE_STRESS_SEED"

// requireStress skips unless JOBTRIAGE_STRESS=1 or CI is set. Past it, a
// database that cannot be reached fails under CI (sqltest decides).
func requireStress(t *testing.T) {
	t.Helper()
	if os.Getenv("JOBTRIAGE_STRESS") != "1" && os.Getenv("CI") == "" {
		t.Skip("stress tests are off: set JOBTRIAGE_STRESS=1 (or CI) to seed 100,000 failed jobs per database and run, kill and race the real binary against them")
	}
}

// rngSeed is the kill schedule's seed: JOBTRIAGE_STRESS_SEED, or the clock.
// It is logged so a failing schedule can be replayed.
func rngSeed(t *testing.T) uint64 {
	t.Helper()
	if v := os.Getenv(seedEnv); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", seedEnv, v)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// streamOf derives a per-subtest stream from a name, so each driver's
// schedule is reproducible on its own.
func streamOf(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// jobtriage is the binary under test, run from an empty directory with an
// environment that names no database: only --dsn says where to go.
type jobtriage struct {
	path string
	dir  string
}

// built is the binary under test, compiled once per package run (the
// first test that needs it builds it) and removed by TestMain: linking it
// again for each test cost tens of seconds on a loaded CI machine.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// buildJobtriage returns the module's main package, compiled once, to run
// from a fresh empty directory of the test's own.
func buildJobtriage(t *testing.T) jobtriage {
	t.Helper()
	built.once.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			built.err = fmt.Errorf("go not on PATH: %v", err)
			return
		}
		if built.dir, err = os.MkdirTemp("", "jobtriage-stress-"); err != nil {
			built.err = err
			return
		}
		bin := filepath.Join(built.dir, "jobtriage")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, "build", "-o", bin, "github.com/jobtriage/jobtriage")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build jobtriage: %v\n%s", err, out)
			return
		}
		built.path = bin
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return jobtriage{path: built.path, dir: t.TempDir()}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// process is one started jobtriage.
type process struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan struct{}
	err            error
}

func (j jobtriage) start(t *testing.T, args ...string) *process {
	t.Helper()
	return j.startIn(t, j.dir, args...)
}

// startIn starts jobtriage in dir, e.g. a Laravel app whose profile (not
// --dsn) says where the databases and queues are.
func (j jobtriage) startIn(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	p := &process{done: make(chan struct{})}
	p.cmd = exec.Command(j.path, args...)
	p.cmd.Dir = dir
	p.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + j.dir, "NO_COLOR=1", "TERM=dumb"}
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start jobtriage: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the process to exit by itself and returns its exit code.
func (p *process) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(runTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("jobtriage %s ran longer than %s\nstderr: %s", strings.Join(p.cmd.Args[1:], " "), runTimeout, p.stderr.String())
	}
	return exitCode(t, p.err)
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode()
	}
	t.Fatalf("jobtriage did not exit normally: %v", err)
	return -1
}

// seeded is a scratch Laravel database holding seedRows failed jobs on the
// database connection, and what the test knows about them.
type seeded struct {
	driver string
	ep     sqlstore.Endpoint
	dsn    string
	db     *sqlx.DB
	// payloads maps each seeded uuid to the hash of its payload bytes.
	payloads map[string][sha256.Size]byte
}

// seed creates the database, bulk-inserts n failed jobs and reads them back.
func seed(t *testing.T, driver string, n int) *seeded {
	t.Helper()
	start := time.Now()
	ctx := context.Background()
	ep := sqltest.NewEndpoint(t, driver)
	db, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqlstore.CreateLaravelSchema(ctx, db, driver, sqlstore.SchemaLaravel8); err != nil {
		t.Fatalf("create Laravel schema on %s: %v", driver, err)
	}
	if err := insertBacklog(ctx, db, driver, n); err != nil {
		t.Fatalf("seed %d failed jobs on %s: %v", n, driver, err)
	}
	// One connection from here on: sessions() tells the checker's own
	// session from a jobtriage that lingers on the server.
	db.SetMaxOpenConns(1)
	s := &seeded{driver: driver, ep: ep, dsn: sqltest.DSN(ep), db: db, payloads: make(map[string][sha256.Size]byte, n)}
	rows, err := db.QueryContext(ctx, "SELECT uuid, payload FROM failed_jobs")
	if err != nil {
		t.Fatalf("read the seeded rows: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var uuid string
		var payload []byte
		if err := rows.Scan(&uuid, &payload); err != nil {
			t.Fatalf("read the seeded rows: %v", err)
		}
		if _, dup := s.payloads[uuid]; dup {
			t.Fatalf("seeding produced uuid %s twice", uuid)
		}
		if got := jsonUUID(payload); got != uuid {
			t.Fatalf("seeded row %s carries payload uuid %q", uuid, got)
		}
		s.payloads[uuid] = sha256.Sum256(payload)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the seeded rows: %v", err)
	}
	if len(s.payloads) != n {
		t.Fatalf("seeded %d rows, read back %d", n, len(s.payloads))
	}
	t.Logf("seeded %d failed jobs on %s in %s", n, driver, time.Since(start).Round(time.Millisecond))
	return s
}

// payloadUUID is the SQL that reads a jobs row's uuid out of its payload:
// the jobs table has no uuid column, the payload carries it.
func (s *seeded) payloadUUID() string {
	switch s.driver {
	case "postgres":
		// Not payload::json->>'uuid': PostgreSQL refuses the \u0000 that
		// serialized protected properties put in data.command. Laravel
		// writes uuid as the first key.
		return `substring(payload from '^\{"uuid":"([^"]*)"')`
	case "mysql":
		return "JSON_UNQUOTE(JSON_EXTRACT(payload, '$.uuid'))"
	}
	return "json_extract(payload, '$.uuid')"
}

// census checks that every seeded uuid is in exactly one of failed_jobs and
// jobs, and nothing else is in either, and returns how many are in jobs.
// Both tables are read by one statement, so a commit landing during the
// check cannot make a job look lost or doubled.
func (s *seeded) census(t *testing.T, when string) (moved int) {
	t.Helper()
	q := "SELECT 'f', uuid FROM failed_jobs UNION ALL SELECT 'j', " + s.payloadUUID() + " FROM jobs"
	rows, err := s.db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: census: %v", when, err)
	}
	defer rows.Close()
	seen := make(map[string]string, len(s.payloads))
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		} else if len(problems) == 10 {
			problems = append(problems, "…")
		}
	}
	lost, doubled, stray := 0, 0, 0
	for rows.Next() {
		var table string
		var uuid *string
		if err := rows.Scan(&table, &uuid); err != nil {
			t.Fatalf("%s: census: %v", when, err)
		}
		if uuid == nil {
			stray++
			problem("a %s row without a uuid", tableName(table))
			continue
		}
		if _, ok := s.payloads[*uuid]; !ok {
			stray++
			problem("%s holds %s, which was never seeded", tableName(table), *uuid)
			continue
		}
		if prev, ok := seen[*uuid]; ok {
			doubled++
			problem("%s is in %s and again in %s", *uuid, tableName(prev), tableName(table))
			continue
		}
		seen[*uuid] = table
		if table == "j" {
			moved++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: census: %v", when, err)
	}
	for uuid := range s.payloads {
		if _, ok := seen[uuid]; !ok {
			lost++
			problem("%s is in neither table", uuid)
		}
	}
	if lost+doubled+stray > 0 {
		t.Fatalf("%s: %d jobs lost, %d doubled, %d stray rows:\n  %s", when, lost, doubled, stray, strings.Join(problems, "\n  "))
	}
	return moved
}

func tableName(tag string) string {
	if tag == "j" {
		return "jobs"
	}
	return "failed_jobs"
}

// allMovedIntact checks the end state of a complete retry: failed_jobs is
// empty and every job is in jobs once, as DatabaseQueue::pushRaw writes it
// (attempts 0, not reserved), with its payload byte for byte as seeded.
func (s *seeded) allMovedIntact(t *testing.T) {
	t.Helper()
	if moved := s.census(t, "after the final run"); moved != len(s.payloads) {
		var left []int64
		if err := s.db.Select(&left, "SELECT id FROM failed_jobs ORDER BY id LIMIT 20"); err != nil {
			t.Fatal(err)
		}
		t.Fatalf("after the final run %d of %d jobs are in jobs, the rest still in failed_jobs (ids %v…)", moved, len(s.payloads), left)
	}
	ctx := context.Background()
	var pending int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM jobs WHERE attempts <> 0 OR reserved_at IS NOT NULL").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d retried jobs have attempts <> 0 or a reserved_at", pending)
	}
	s.payloadsIntact(t, "SELECT payload FROM jobs")
}

// payloadsIntact reads every payload q returns and compares it with the
// seeded bytes.
func (s *seeded) payloadsIntact(t *testing.T, q string) {
	t.Helper()
	rows, err := s.db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	changed, n := 0, 0
	for rows.Next() {
		var payload []byte
		if err := rows.Scan(&payload); err != nil {
			t.Fatal(err)
		}
		n++
		uuid := jsonUUID(payload)
		if want, ok := s.payloads[uuid]; !ok || want != sha256.Sum256(payload) {
			if changed < 5 {
				t.Errorf("payload of %q differs from the seeded bytes: %.200s", uuid, payload)
			}
			changed++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if changed > 0 {
		t.Fatalf("%d of %d payloads differ from what was seeded", changed, n)
	}
}

// jsonUUID reads the top-level "uuid" of a Laravel payload without a full
// decode: Laravel writes it as the first key, and a decode of every payload
// would dominate the check.
func jsonUUID(payload []byte) string {
	const key = `{"uuid":"`
	if !bytes.HasPrefix(payload, []byte(key)) {
		return ""
	}
	rest := payload[len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}

// awaitNoSessions waits until no other session is connected to the scratch
// database: after a SIGKILL the server rolls the dead client's transaction
// back only when it notices the closed socket, and until then its row locks
// would make the next retry skip those rows.
func (s *seeded) awaitNoSessions(t *testing.T) {
	t.Helper()
	var q string
	switch s.driver {
	case "postgres":
		q = "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
	case "mysql":
		q = "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
	default:
		return // SQLite: the lock died with the process
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := s.db.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("count sessions: %v", err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions of killed jobtriage processes still on the server after 30s", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// templateRows is how many distinct realistic rows demo generates; the
// backlog repeats them under fresh uuids. Generating all 100,000 would cost
// more than the retries under test, and retry treats every row alike.
const templateRows = 2000

// backlogUUID is the uuid of the i-th backlog row: unique, version 4 in form.
func backlogUUID(i int) string { return fmt.Sprintf("5d7e55e5-0000-4000-8000-%012x", i) }

// insertBacklog inserts n failed jobs, all on the database connection (retry
// skips the others by design; this proof is about the ones it moves): COPY
// on PostgreSQL, multi-row INSERTs elsewhere, a transaction per 10,000 rows.
func insertBacklog(ctx context.Context, db *sqlx.DB, driver string, n int) error {
	g, err := demo.NewGenerator(demo.Options{Failed: templateRows, Seed: 20260501,
		Connections: []string{"database"}, ExceptionSize: 600})
	if err != nil {
		return err
	}
	var templates []demo.FailedRow
	for {
		r, ok, err := g.NextFailed()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if !strings.HasPrefix(r.Payload, `{"uuid":"`+r.UUID+`"`) {
			return fmt.Errorf("template payload does not start with its uuid: %.80s", r.Payload)
		}
		templates = append(templates, r)
	}
	row := func(i int) []any {
		tpl := templates[i%len(templates)]
		uuid := backlogUUID(i)
		return []any{uuid, tpl.Connection, tpl.Queue, strings.Replace(tpl.Payload, tpl.UUID, uuid, 1), tpl.Exception, tpl.FailedAtText()}
	}
	return insertGenerated(ctx, db, driver, n, row)
}

// insertGenerated inserts rows 0..n-1 of row (values in failedColumns
// order) into failed_jobs: COPY on PostgreSQL, multi-row INSERTs elsewhere,
// a transaction per 10,000 rows.
func insertGenerated(ctx context.Context, db *sqlx.DB, driver string, n int, row func(int) []any) error {
	const perTx = 10_000
	for from := 0; from < n; from += perTx {
		to := min(from+perTx, n)
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if driver == "postgres" {
			err = copyRows(ctx, tx, from, to, row)
		} else {
			err = insertRows(ctx, tx, from, to, row)
		}
		if err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

var failedColumns = []string{"uuid", "connection", "queue", "payload", "exception", "failed_at"}

func copyRows(ctx context.Context, tx *sql.Tx, from, to int, row func(int) []any) error {
	stmt, err := tx.PrepareContext(ctx, copyFrom("failed_jobs", failedColumns...))
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i := from; i < to; i++ {
		if _, err := stmt.ExecContext(ctx, row(i)...); err != nil {
			return err
		}
	}
	_, err = stmt.ExecContext(ctx)
	return err
}

func insertRows(ctx context.Context, tx *sql.Tx, from, to int, row func(int) []any) error {
	const perInsert = 200 // SQLite's 32,766 variables, MariaDB's packet size
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(failedColumns)), ", ") + ")"
	for i := from; i < to; i += perInsert {
		j := min(i+perInsert, to)
		args := make([]any, 0, (j-i)*len(failedColumns))
		for k := i; k < j; k++ {
			args = append(args, row(k)...)
		}
		q := "INSERT INTO failed_jobs (" + strings.Join(failedColumns, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(tuple+", ", j-i), ", ")
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// copyFrom is the COPY ... FROM STDIN statement lib/pq prepares for a bulk
// write: the table and columns quoted as identifiers (what the deprecated
// pq.CopyIn built).
func copyFrom(table string, cols ...string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = pq.QuoteIdentifier(c)
	}
	return "COPY " + pq.QuoteIdentifier(table) + " (" + strings.Join(q, ", ") + ") FROM STDIN"
}

// TestBacklogsSpanBatches keeps the backlogs' claims about retry's batches
// true when triage.WriteBatch changes. It needs no database.
func TestBacklogsSpanBatches(t *testing.T) {
	for _, c := range []struct {
		name      string
		rows, min int
	}{
		{"seedRows", seedRows, 20},
		{"redisSeedRows", redisSeedRows, 10},
		{"readOnlyRows", readOnlyRows, 3},
		{"poisonRows", poisonRows, 2},
	} {
		if got := c.rows / triage.WriteBatch; got < c.min {
			t.Errorf("%s = %d spans %d batches of %d, want at least %d", c.name, c.rows, got, triage.WriteBatch, c.min)
		}
	}
	if poisonOffset >= triage.WriteBatch {
		t.Errorf("poisonOffset %d is not inside the first batch of %d", poisonOffset, triage.WriteBatch)
	}
}

// skipUnlessRequired skips a test whose environment lacks something it
// needs (a tmpfs mount, a pseudo-terminal), saying what; under CI, where
// the environment must provide it, it fails instead, as the database
// tests do (sqltest.Required).
func skipUnlessRequired(t *testing.T, format string, args ...any) {
	t.Helper()
	if sqltest.Required() {
		t.Fatalf(format+" (required under CI)", args...)
	}
	t.Skipf(format, args...)
}
