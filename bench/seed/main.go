// Command seed fills a benchmark database with demo rows, once: a
// database whose failed_jobs already holds the wanted number of rows is
// reused as it is.
//
//	go run ./bench/seed -server postgres://postgres@127.0.0.1:5432/test -db jobtriage_bench_1m -rows 1000000
package main

import (
	"context"
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

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

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
	scenarios := fs.String("scenarios", "", "only these comma-separated demo scenarios (e.g. model-not-found,closure)")
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
	ep, err := sqlstore.EnsureDatabase(ctx, adminEndpoint(u), *name)
	if err != nil {
		return err
	}
	seeder, err := sqlstore.OpenSeeder(ctx, ep)
	if err != nil {
		return err
	}
	defer seeder.Close()
	// A database is reused only when it was seeded with the same
	// parameters: a count alone kept stale data (rows of scenarios a
	// script has since excluded) across changes of the flags.
	params := fmt.Sprintf("rows=%d jobs=%d payload=%d exception=%d seed=%d connections=%s scenarios=%s",
		*rows, *jobs, *payload, *exc, *seed, *conns, *scenarios)
	if have, had, ok := seeder.SeededWith(ctx); have == int64(*rows) && !*force {
		if ok && had == params {
			fmt.Fprintf(stdout, "%s: reusing %d failed_jobs rows (%s)\n", *name, have, params)
			return nil
		}
		fmt.Fprintf(stderr, "%s: %d rows, but seeded with other parameters (%q, want %q): reseeding\n", *name, have, had, params)
	}
	if err := seeder.ResetLaravelSchema(ctx, sqlstore.SchemaLaravel8); err != nil {
		return err
	}
	start := time.Now()
	opts := demo.Options{Failed: *rows, Jobs: *jobs, Seed: *seed, PayloadSize: *payload, ExceptionSize: *exc,
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
	if err := demo.Populate(ctx, seeder, opts); err != nil {
		return err
	}
	if err := seeder.RecordSeed(ctx, params); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\n")
	fmt.Fprintf(stdout, "%s: seeded %d failed_jobs and %d jobs rows in %s\n", *name, *rows, *jobs, time.Since(start).Round(time.Second))
	return nil
}

// adminEndpoint is the server's admin DSN as a store endpoint.
func adminEndpoint(u *url.URL) sqlstore.Endpoint {
	port, _ := strconv.Atoi(u.Port())
	pw, _ := u.User.Password()
	ep := sqlstore.Endpoint{Driver: u.Scheme, Host: u.Hostname(), Port: port, Database: strings.TrimPrefix(u.Path, "/"),
		User: u.User.Username(), Password: pw, Params: map[string]string{}}
	for k, v := range u.Query() {
		ep.Params[k] = v[0]
	}
	if ep.Port == 0 {
		ep.Port = map[string]int{"postgres": 5432, "mysql": 3306}[u.Scheme]
	}
	return ep
}
