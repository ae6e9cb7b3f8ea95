// Command firstscreen times tui.FirstScreen, the TUI's first rendered
// screen (120×40, the signatures page), against a database:
//
//	go run ./bench/firstscreen -dsn postgres://postgres@127.0.0.1:5432/jobtriage_bench_1m -n 5
//
// It prints one line in bench/measure's format (label, runs, median s,
// min s, peak RSS MiB of this process).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/jobtriage/jobtriage/bench/internal/benchstore"
	"github.com/jobtriage/jobtriage/tui"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "firstscreen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("firstscreen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dsn := fs.String("dsn", "", "database URL")
	n := fs.Int("n", 5, "measured runs")
	warmup := fs.Int("warmup", 1, "unmeasured runs first")
	width := fs.Int("width", 120, "terminal width")
	height := fs.Int("height", 40, "terminal height")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dsn == "" || *n < 1 || *warmup < 0 {
		return errors.New("need -dsn, -n >= 1 and -warmup >= 0")
	}
	st, svc, err := benchstore.Open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer st.Close()
	var screen string
	took, err := benchstore.Time(*warmup, *n, func() error {
		var err error
		screen, err = tui.FirstScreen(ctx, svc, tui.Options{NoColor: true}, *width, *height)
		return err
	})
	if err != nil {
		return err
	}
	if screen == "" {
		return errors.New("the first screen is empty")
	}
	return benchstore.Report(stdout, "TUI first screen", took)
}
