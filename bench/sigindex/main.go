// Command sigindex measures the signature index's goals in one
// run against a seeded 1,000,000-row database:
//
//  1. restore the table to the seeded rows (undo a previous run's changes),
//  2. a bare server-side scan that reads the same column heads (baseline),
//  3. a cold `failed --group --json` (empty cache directory),
//  4. 1,000 new failures and 10,000 deletions (every hundredth row),
//  5. warm `failed --group --json` runs: the first reads what changed, the
//     next ones find nothing new,
//  6. optionally (-verify) `failed --group --json --no-cache`, whose output
//     must equal the warm one's.
//
// It prints one tab-separated line per measurement: server, label, seconds,
// peak RSS of the child in MiB (rusage), and notes.
//
//	go run ./bench/sigindex -dsn postgres://postgres@127.0.0.1:5432/jobtriage_bench_sigindex?sslmode=disable -jobtriage bench/out/jobtriage
//
// Run it only under flock /tmp/jobtriage-heavy.lock: it changes the fixed
// benchmark database. Seed it once with
// bench/seed -db jobtriage_bench_sigindex -rows 1000000.
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sigindex:", err)
		os.Exit(1)
	}
}

// deletedTable keeps the rows a run deleted, so the next run restores them.
const deletedTable = "failed_jobs_sigbench_deleted"

type bench struct {
	server string // postgres or mysql
	dsn    string
	db     *sql.DB
	jt     string
	cache  string
	out    io.Writer
	errOut io.Writer
	rows   int64
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sigindex", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "the benchmark database, as jobtriage --dsn takes it")
	jt := fs.String("jobtriage", "bench/out/jobtriage", "the jobtriage binary")
	cache := fs.String("cache", "", "cache directory for the index (default a fresh temporary one)")
	rows := fs.Int64("rows", 1_000_000, "seeded failed_jobs rows")
	newRows := fs.Int("new", 1000, "new failures after the cold pass")
	every := fs.Int("delete-every", 100, "delete every Nth seeded row after the cold pass (100: 10,000 of 1M)")
	warm := fs.Int("warm", 5, "warm runs")
	verify := fs.Bool("verify", false, "also run --no-cache and compare its output with the warm one")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "mysql") {
		return fmt.Errorf("-dsn %q: want postgres://… or mysql://…", *dsn)
	}
	b := &bench{server: u.Scheme, dsn: *dsn, jt: *jt, out: stdout, errOut: stderr, rows: *rows}
	if b.cache = *cache; b.cache == "" {
		if b.cache, err = os.MkdirTemp("", "sigbench"); err != nil {
			return err
		}
		defer os.RemoveAll(b.cache)
	}
	if b.db, err = openDB(u); err != nil {
		return err
	}
	defer b.db.Close()

	b.log("restoring the seeded rows")
	if err := b.restore(ctx); err != nil {
		return err
	}
	bare, err := b.bareScan(ctx)
	if err != nil {
		return err
	}
	b.report("bare scan of the column heads (SQL)", bare, 0, bareSQL[b.server])

	if err := os.RemoveAll(b.cache); err != nil {
		return err
	}
	cold, rss, _, err := b.group()
	if err != nil {
		return err
	}
	b.report("cold failed --group --json", cold, rss, fmt.Sprintf("%.2f× the bare scan (goal ≤ 2)", cold.Seconds()/bare.Seconds()))
	if size, err := b.indexBytes(); err == nil {
		b.report("index file", 0, 0, fmt.Sprintf("%d bytes, %.1f bytes per row (goal < 40)", size, float64(size)/float64(b.rows)))
	}

	b.log("adding %d failures and deleting every %dth row", *newRows, *every)
	deleted, err := b.mutate(ctx, *newRows, *every)
	if err != nil {
		return err
	}
	var warmOut []byte
	for i := 0; i < *warm; i++ {
		took, rss, out, err := b.group()
		if err != nil {
			return err
		}
		label := "warm failed --group --json (idle)"
		if i == 0 {
			label = fmt.Sprintf("warm failed --group --json after %d new, %d deleted", *newRows, deleted)
			warmOut = out
		}
		b.report(label, took, rss, fmt.Sprintf("%.1f× faster than cold (goal ≥ 20), goal ≤ 1 s", cold.Seconds()/took.Seconds()))
	}
	if size, err := b.indexBytes(); err == nil {
		b.report("index file after the changes", 0, 0, fmt.Sprintf("%d bytes", size))
	}
	if *verify {
		took, rss, out, err := b.group("--no-cache")
		if err != nil {
			return err
		}
		equal, err := sameGrouping(out, warmOut)
		if err != nil {
			return err
		}
		same := "output identical to the warm index's (but new_since, the clock)"
		if !equal {
			same = "OUTPUT DIFFERS from the warm index's"
		}
		b.report("failed --group --json --no-cache", took, rss, same)
		if !equal {
			return errors.New("the index grouped differently from a pass over the table")
		}
	}
	return nil
}

func (b *bench) log(format string, args ...any) {
	fmt.Fprintf(b.errOut, "== "+format+"\n", args...)
}

func (b *bench) report(label string, took time.Duration, rssKiB int64, note string) {
	fmt.Fprintf(b.out, "%s\t%s\t%.3f\t%.1f\t%s\n", b.server, label, took.Seconds(), float64(rssKiB)/1024, note)
}

func openDB(u *url.URL) (*sql.DB, error) {
	if u.Scheme == "postgres" {
		return sql.Open("postgres", u.String())
	}
	c := mysql.NewConfig()
	c.User = u.User.Username()
	c.Passwd, _ = u.User.Password()
	c.Net, c.Addr = "tcp", u.Host
	c.DBName = strings.TrimPrefix(u.Path, "/")
	return sql.Open("mysql", c.FormatDSN())
}

// bareSQL reads the same column heads grouping needs, the issue's
// baseline: the payload's head and the exception's first line, grouped.
var bareSQL = map[string]string{
	"postgres": `SELECT count(*) FROM failed_jobs GROUP BY substr(payload, 1, 200), split_part(exception, E'\n', 1)`,
	"mysql":    `SELECT COUNT(*) FROM failed_jobs GROUP BY SUBSTRING(payload, 1, 200), SUBSTRING_INDEX(exception, '\n', 1)`,
}

func (b *bench) bareScan(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	rows, err := b.db.QueryContext(ctx, bareSQL[b.server])
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return time.Since(start), rows.Err()
}

func (b *bench) exec(ctx context.Context, q string) error {
	if _, err := b.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// restore undoes a previous run: its deleted rows come back, its new
// failures go, and the table holds the seeded rows again.
func (b *bench) restore(ctx context.Context) error {
	var exists bool
	q := `SELECT count(*) > 0 FROM information_schema.tables WHERE table_name = '` + deletedTable + `'`
	if b.server == "postgres" {
		q += ` AND table_schema = current_schema()`
	} else {
		q += ` AND table_schema = DATABASE()`
	}
	if err := b.db.QueryRowContext(ctx, q).Scan(&exists); err != nil {
		return err
	}
	if exists {
		if err := b.exec(ctx, `INSERT INTO failed_jobs SELECT * FROM `+deletedTable); err != nil {
			return err
		}
		if err := b.exec(ctx, `DROP TABLE `+deletedTable); err != nil {
			return err
		}
	}
	if err := b.exec(ctx, fmt.Sprintf(`DELETE FROM failed_jobs WHERE id > %d`, b.rows)); err != nil {
		return err
	}
	var n int64
	if err := b.db.QueryRowContext(ctx, `SELECT count(*) FROM failed_jobs`).Scan(&n); err != nil {
		return err
	}
	if n != b.rows {
		return fmt.Errorf("failed_jobs holds %d rows, want the %d seeded ones (reseed with bench/seed -force)", n, b.rows)
	}
	// The steady state a table reaches between failures: PostgreSQL's
	// autovacuum sets the visibility map that lets the live-id scan read
	// the primary key alone.
	if b.server == "postgres" {
		b.log("VACUUM ANALYZE failed_jobs")
		return b.exec(ctx, `VACUUM ANALYZE failed_jobs`)
	}
	return b.exec(ctx, `ANALYZE TABLE failed_jobs`)
}

// mutate adds n failures (copies of the oldest rows with new uuids, failing
// now) and deletes every every-th seeded row, keeping the deleted rows
// for the next run's restore. It returns how many rows it deleted.
func (b *bench) mutate(ctx context.Context, n, every int) (int64, error) {
	uuid := "gen_random_uuid()"
	if b.server == "mysql" {
		uuid = "UUID()"
	}
	ins := fmt.Sprintf(`INSERT INTO failed_jobs (uuid, connection, queue, payload, exception, failed_at)
		SELECT %s, connection, queue, payload, exception, CURRENT_TIMESTAMP FROM failed_jobs WHERE id <= %d ORDER BY id`, uuid, n)
	if err := b.exec(ctx, ins); err != nil {
		return 0, err
	}
	cond := fmt.Sprintf(`id <= %d AND id %% %d = 7`, b.rows, every)
	if err := b.exec(ctx, `CREATE TABLE `+deletedTable+` AS SELECT * FROM failed_jobs WHERE `+cond); err != nil {
		return 0, err
	}
	res, err := b.db.ExecContext(ctx, `DELETE FROM failed_jobs WHERE `+cond)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// group runs failed --group --json once: wall time, peak RSS (KiB), stdout.
func (b *bench) group(extra ...string) (time.Duration, int64, []byte, error) {
	// A 30-day trend window: a minute between two runs moves no row
	// between sparkline slices, so outputs compare byte for byte.
	args := append([]string{"failed", "--group", "--json", "--limit", "0", "--window", "30d", "--dsn", b.dsn}, extra...)
	cmd := exec.Command(b.jt, args...)
	cmd.Env = append(os.Environ(), "JOBTRIAGE_CACHE_DIR="+b.cache)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, nil, fmt.Errorf("%s %s: %w\n%s", b.jt, strings.Join(args, " "), err, errOut.String())
	}
	took := time.Since(start)
	if errOut.Len() > 0 {
		b.log("stderr: %s", strings.TrimSpace(errOut.String()))
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss)
	}
	return took, rss, out.Bytes(), nil
}

func (b *bench) indexBytes() (int64, error) {
	files, err := filepath.Glob(filepath.Join(b.cache, "*.sigidx"))
	if err != nil || len(files) != 1 {
		return 0, fmt.Errorf("index files %q (%v)", files, err)
	}
	fi, err := os.Stat(files[0])
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// sameGrouping compares two failed --group --json documents but for
// new_since, which each run computes from its own clock (now − window).
func sameGrouping(a, b []byte) (bool, error) {
	var da, db map[string]any
	if err := json.Unmarshal(a, &da); err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, &db); err != nil {
		return false, err
	}
	delete(da, "new_since")
	delete(db, "new_since")
	ja, _ := json.Marshal(da)
	jb, _ := json.Marshal(db)
	return bytes.Equal(ja, jb), nil
}
