// Command watchtick times what `jobtriage monitor --watch` does against a
// database: the start (the table's end and the window's failures, as the
// watch's Source.Window reads them), one tick with no new failures (the
// rows above the high-water mark, Source.After), and one check
// (triage.Monitor, which a --json or --max tick also runs).
//
//	go run ./bench/watchtick -dsn mysql://root@127.0.0.1:3306/jobtriage_bench_1m -n 9
//
// It prints one line per step in bench/measure's format.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jobtriage/jobtriage/bench/internal/benchstore"
	"github.com/jobtriage/jobtriage/triage"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "watchtick:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("watchtick", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "database URL")
	n := fs.Int("n", 9, "measured runs of each step")
	window := fs.Duration("window", 5*time.Minute, "failure window (monitor --window)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *n < 1 || *window <= 0 {
		return errors.New("need -dsn, -n >= 1 and a positive -window")
	}
	st, _, err := benchstore.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	count := func(*triage.FailedRow) error { return nil }
	var last int64
	start, err := benchstore.Time(1, *n, func() error {
		if last, err = st.MaxFailedID(ctx); err != nil {
			return err
		}
		return st.ScanRecentFailed(ctx, triage.RecentParams{Since: time.Now().Add(-*window), MaxID: last, Heads: true}, count)
	})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	tick, err := benchstore.Time(1, *n, func() error {
		return st.ScanFailed(ctx, triage.ScanParams{AfterID: last, Ascending: true}, count)
	})
	if err != nil {
		return fmt.Errorf("tick: %w", err)
	}
	check, err := benchstore.Time(1, *n, func() error {
		_, err := triage.Monitor(ctx, st, triage.MonitorParams{Now: time.Now(), RetryAfter: 90 * time.Second, Window: *window})
		return err
	})
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	for _, r := range []struct {
		label string
		took  []time.Duration
	}{{"watch start (Source.Window)", start}, {"watch tick (Source.After)", tick}, {"monitor check (triage.Monitor)", check}} {
		if err := benchstore.Report(stdout, r.label, r.took); err != nil {
			return err
		}
	}
	return nil
}
