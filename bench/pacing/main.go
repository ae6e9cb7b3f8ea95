// Command pacing measures retry --rate: it fills a PostgreSQL Laravel
// database (jobtriage_bench_pacing, dropped and made again per rate: run it
// under flock /tmp/jobtriage-heavy.lock) with failed jobs of the database
// connection, runs the real binary's `retry all --rate R/s --yes` into the
// same database's jobs table, and samples the jobs table's size every few
// milliseconds while it runs (the store's QueueStats, what monitor reads),
// from outside the process. PostgreSQL, not SQLite: SQLite's write lock
// held the sampler off for up to 1.7 s at a time. It
// prints, per rate, the sustained push rate (from the first job seen to the
// last), the busiest and the quietest whole second in between, and how far
// each is from the limit.
//
//	go run ./bench/pacing -rates 200,1000,5000 -jobs 10000
//
// It never runs in go test (see bench/README.md, "Pacing").
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pacing:", err)
		os.Exit(1)
	}
}

// sampleEvery is the time between two looks at the jobs table.
const sampleEvery = 5 * time.Millisecond

type sample struct {
	at time.Time
	n  int64
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pacing", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jobs := fs.Int("jobs", 10000, "failed jobs to retry per rate")
	rates := fs.String("rates", "200,1000,5000", "comma-separated --rate limits, jobs per second")
	bin := fs.String("bin", "", "jobtriage binary (default: go build into a temp dir)")
	host := fs.String("pg-host", "127.0.0.1", "PostgreSQL host (user postgres, trust)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "jobtriage-pacing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if *bin == "" {
		*bin = filepath.Join(dir, "jobtriage")
		cmd := exec.CommandContext(ctx, "go", "build", "-o", *bin, "github.com/jobtriage/jobtriage")
		cmd.Stderr = stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go build: %w", err)
		}
	}
	fmt.Fprintf(stdout, "rate_limit\tjobs_pushed\tsustained_per_s\tdeviation\tbusiest_second\tquietest_second\twall_s\tlongest_sample_gap_ms\n")
	for _, r := range strings.Split(*rates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || rate <= 0 {
			return fmt.Errorf("-rates: %q is not a positive number", r)
		}
		if err := measure(ctx, *bin, *host, *jobs, rate, stdout, stderr); err != nil {
			return fmt.Errorf("rate %g: %w", rate, err)
		}
	}
	return nil
}

// benchDatabase is the database each rate gets afresh.
const benchDatabase = "jobtriage_bench_pacing"

func measure(ctx context.Context, bin, host string, jobs int, rate float64, stdout, stderr io.Writer) error {
	admin, err := sqlstore.OpenRaw(ctx, sqlstore.Endpoint{Driver: "postgres", Host: host, Port: 5432, User: "postgres", Database: "postgres"})
	if err != nil {
		return err
	}
	// Like bench/seed, the one statement sqlstore has no API for.
	for _, q := range []string{"DROP DATABASE IF EXISTS " + benchDatabase, "CREATE DATABASE " + benchDatabase} {
		if _, err = admin.ExecContext(ctx, q); err != nil {
			break
		}
	}
	admin.Close()
	if err != nil {
		return err
	}
	ep := sqlstore.Endpoint{Driver: "postgres", Host: host, Port: 5432, User: "postgres", Database: benchDatabase}
	dsn := fmt.Sprintf("postgres://postgres@%s:5432/%s?sslmode=disable", host, benchDatabase)
	seeder, err := sqlstore.OpenSeeder(ctx, ep)
	if err != nil {
		return err
	}
	if err = seeder.CreateLaravelSchema(ctx, sqlstore.SchemaLaravel8); err == nil {
		err = demo.Populate(ctx, seeder, demo.Options{Failed: jobs, Seed: 7, Connections: []string{"database"}})
	}
	seeder.Close()
	if err != nil {
		return err
	}
	store, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: ep})
	if err != nil {
		return err
	}
	defer store.Close()

	cmd := exec.CommandContext(ctx, bin, "retry", "all", "--yes", "--rate", fmt.Sprintf("%g/s", rate),
		"--retry-until", "1h", "--dsn", dsn)
	cmd.Stdout = stderr
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var samples []sample
	var runErr error
	for finished := false; !finished; {
		select {
		case runErr = <-done:
			finished = true
		case <-time.After(sampleEvery):
		}
		n, err := size(ctx, store)
		if err != nil {
			continue // the writer held the lock; the next look counts
		}
		samples = append(samples, sample{time.Now(), n})
	}
	var ee *exec.ExitError
	if runErr != nil && !(errors.As(runErr, &ee) && ee.ExitCode() == 7) { // 7: some skipped (malformed demo rows)
		return fmt.Errorf("retry: %w", runErr)
	}
	return report(stdout, rate, samples)
}

func size(ctx context.Context, s *sqlstore.Store) (int64, error) {
	st, err := s.QueueStats(ctx, triage.QueueStatsParams{Now: time.Now()})
	if err != nil {
		return 0, err
	}
	var n int64
	for _, q := range st {
		n += q.Size
	}
	return n, nil
}

// report reads the samples: the first look that saw a job starts the
// schedule, the first look that saw them all ends it. The sustained rate
// is the jobs pushed after the first batch over that time (the first batch
// goes at once, the n-th job at n/rate); the busiest and quietest whole
// seconds are counted between the two, from the samples nearest each
// second's ends.
func report(w io.Writer, rate float64, samples []sample) error {
	if len(samples) == 0 {
		return errors.New("no samples")
	}
	total := samples[len(samples)-1].n
	first, last := -1, -1
	for i, s := range samples {
		if first < 0 && s.n > 0 {
			first = i
		}
		if last < 0 && s.n == total {
			last = i
		}
	}
	if first < 0 || last <= first {
		return fmt.Errorf("too few samples to tell (%d jobs)", total)
	}
	start, end := samples[first], samples[last]
	wall := end.at.Sub(start.at).Seconds()
	sustained := float64(end.n-start.n) / wall
	at := func(t time.Time) int64 { // jobs seen by time t
		n := int64(0)
		for _, s := range samples {
			if s.at.After(t) {
				break
			}
			n = s.n
		}
		return n
	}
	busiest, quietest := 0.0, -1.0
	for t := start.at; !t.Add(time.Second).After(end.at); t = t.Add(100 * time.Millisecond) {
		n := float64(at(t.Add(time.Second)) - at(t))
		busiest = max(busiest, n)
		if quietest < 0 || n < quietest {
			quietest = n
		}
	}
	if quietest < 0 {
		quietest = 0
	}
	gap := time.Duration(0)
	for i := first + 1; i <= last; i++ {
		gap = max(gap, samples[i].at.Sub(samples[i-1].at))
	}
	fmt.Fprintf(w, "%g/s\t%d\t%.1f\t%+.1f%%\t%.0f\t%.0f\t%.2f\t%d\n", rate, total, sustained, (sustained-rate)/rate*100, busiest, quietest, wall,
		gap.Milliseconds())
	return nil
}
