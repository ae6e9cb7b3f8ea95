// Command seed fills a benchmark database with demodata rows, once: a
// database whose failed_jobs already holds the wanted number of rows is
// reused as it is.
//
//	go run ./bench/seed -server postgres://postgres@127.0.0.1:5432/test -db jobtriage_bench_1m -rows 1000000
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"

	"github.com/jobtriage/jobtriage/triage/demodata"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

// seedTable records the parameters a benchmark database was seeded with.
const seedTable = "jobtriage_bench_seed"

var dbNameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "", "admin DSN of the server: postgres://user@host:port/db or mysql://user@host:port/db")
	name := fs.String("db", "", "benchmark database to create or reuse")
	rows := fs.Int("rows", 10000, "failed_jobs rows")
	jobs := fs.Int("jobs", -1, "jobs rows (default rows/100, at least 50)")
	payload := fs.Int("payload", 2048, "payload size target in bytes")
	exc := fs.Int("exception", 4096, "exception size target in bytes")
	seed := fs.Uint64("seed", 1, "generator seed")
	conns := fs.String("connections", "", "only scenarios on this queue connection (database or redis)")
	scenarios := fs.String("scenarios", "", "only these comma-separated demodata scenarios (e.g. model-not-found,closure)")
	force := fs.Bool("force", false, "drop and reseed even when the row count is right")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if !dbNameRE.MatchString(*name) {
		return fmt.Errorf("-db %q: use lowercase letters, digits and underscores", *name)
	}
	if *rows < 0 {
		return errors.New("-rows must not be negative")
	}
	if *jobs < 0 {
		*jobs = max(50, *rows/100)
	}
	u, err := url.Parse(*server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "mysql") {
		return fmt.Errorf("-server %q: want postgres://… or mysql://…", *server)
	}
	ep, err := ensureDatabase(ctx, u, *name)
	if err != nil {
		return err
	}
	db, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		return err
	}
	defer db.Close()
	// A database is reused only when it was seeded with the same
	// parameters: a count alone kept stale data (rows of scenarios a
	// script has since excluded) across changes of the flags.
	params := fmt.Sprintf("rows=%d jobs=%d payload=%d exception=%d seed=%d connections=%s scenarios=%s",
		*rows, *jobs, *payload, *exc, *seed, *conns, *scenarios)
	var have int
	var had string
	if err := db.GetContext(ctx, &have, "SELECT count(*) FROM failed_jobs"); err == nil && have == *rows && !*force {
		if err := db.GetContext(ctx, &had, "SELECT params FROM "+seedTable); err == nil && had == params {
			fmt.Fprintf(stdout, "%s: reusing %d failed_jobs rows (%s)\n", *name, have, params)
			return nil
		}
		fmt.Fprintf(stderr, "%s: %d rows, but seeded with other parameters (%q, want %q): reseeding\n", *name, have, had, params)
	}
	for _, t := range []string{"failed_jobs", "jobs", "job_batches", seedTable} {
		if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t); err != nil {
			return err
		}
	}
	if err := sqlstore.CreateLaravelSchema(ctx, db, ep.Driver, sqlstore.SchemaLaravel8); err != nil {
		return err
	}
	start := time.Now()
	opts := demodata.Options{Failed: *rows, Jobs: *jobs, Seed: *seed, PayloadSize: *payload, ExceptionSize: *exc,
		Now: time.Now().UTC().Truncate(time.Hour)}
	if *conns != "" {
		opts.Connections = []string{*conns}
	}
	if *scenarios != "" {
		opts.Scenarios = strings.Split(*scenarios, ",")
	}
	next := 0
	opts.Progress = func(done, total int) {
		if done >= next || done == total {
			fmt.Fprintf(stderr, "\r%s: %d/%d rows, %s", *name, done, total, time.Since(start).Round(time.Second))
			next = done + total/100
		}
	}
	if err := demodata.Populate(ctx, db, ep.Driver, opts); err != nil {
		return err
	}
	if ep.Driver == "postgres" {
		_, _ = db.ExecContext(ctx, "VACUUM ANALYZE failed_jobs")
	} else {
		_, _ = db.ExecContext(ctx, "ANALYZE TABLE failed_jobs")
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+seedTable+" (params varchar(500) NOT NULL)"); err != nil {
		return err
	}
	if _, err := db.ExecContext(ctx, db.Rebind("INSERT INTO "+seedTable+" (params) VALUES (?)"), params); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\n")
	fmt.Fprintf(stdout, "%s: seeded %d failed_jobs and %d jobs rows in %s\n", *name, *rows, *jobs, time.Since(start).Round(time.Second))
	return nil
}

// ensureDatabase creates the database on the server when missing and
// returns its endpoint.
func ensureDatabase(ctx context.Context, u *url.URL, name string) (sqlstore.Endpoint, error) {
	host := u.Hostname()
	port, _ := strconv.Atoi(u.Port())
	pw, _ := u.User.Password()
	ep := sqlstore.Endpoint{Driver: u.Scheme, Host: host, Port: port, Database: name, User: u.User.Username(), Password: pw, Params: map[string]string{}}
	switch u.Scheme {
	case "postgres":
		if ep.Port == 0 {
			ep.Port = 5432
		}
		for k, v := range u.Query() {
			ep.Params[k] = v[0]
		}
		admin, err := sql.Open("postgres", u.String())
		if err != nil {
			return ep, err
		}
		defer admin.Close()
		var exists bool
		if err := admin.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
			return ep, fmt.Errorf("postgres: %w", err)
		}
		if !exists {
			if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
				return ep, err
			}
		}
	case "mysql":
		if ep.Port == 0 {
			ep.Port = 3306
		}
		mc := mysql.NewConfig()
		mc.User, mc.Passwd, mc.Net, mc.Addr = ep.User, pw, "tcp", u.Host
		conn, err := mysql.NewConnector(mc)
		if err != nil {
			return ep, err
		}
		admin := sql.OpenDB(conn)
		defer admin.Close()
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
			return ep, fmt.Errorf("mysql: %w", err)
		}
	}
	return ep, nil
}
