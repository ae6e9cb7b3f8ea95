// Command measure runs a command several times and reports the median wall
// time and the peak resident set size of the child (from its rusage):
//
//	measure -n 5 -label "failed 1m" -- jobtriage failed --dsn … --limit 50 --json
//
// Output is one tab-separated line: label, runs, median seconds, min
// seconds, max RSS in MiB. The child's stdout goes to -stdout (default
// /dev/null); a failing run fails the measurement.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "measure:", err)
		os.Exit(1)
	}
}

// Result is one measured command.
type Result struct {
	Label     string
	Runs      int
	Median    time.Duration
	Min       time.Duration
	MaxRSSKiB int64
}

func (r Result) String() string {
	return fmt.Sprintf("%s\t%d\t%.3f\t%.3f\t%.1f", r.Label, r.Runs, r.Median.Seconds(), r.Min.Seconds(), float64(r.MaxRSSKiB)/1024)
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("measure", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 5, "measured runs")
	warmup := fs.Int("warmup", 1, "unmeasured runs first (warm caches)")
	label := fs.String("label", "", "label of the output line (default: the command)")
	out := fs.String("stdout", os.DevNull, "where the child's stdout goes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return errors.New("no command given (put it after --)")
	}
	if *n < 1 || *warmup < 0 {
		return errors.New("-n must be at least 1 and -warmup not negative")
	}
	if *label == "" {
		*label = argv[0]
	}
	res, err := Measure(argv, *n, *warmup, *out, stderr)
	if err != nil {
		return err
	}
	res.Label = *label
	fmt.Fprintln(stdout, res)
	return nil
}

// Measure runs argv warmup+n times and summarises the n measured runs.
func Measure(argv []string, n, warmup int, stdoutPath string, stderr io.Writer) (Result, error) {
	var walls []time.Duration
	var maxRSS int64
	for i := 0; i < warmup+n; i++ {
		wall, rss, err := once(argv, stdoutPath, stderr)
		if err != nil {
			return Result{}, err
		}
		if i < warmup {
			continue
		}
		walls = append(walls, wall)
		maxRSS = max(maxRSS, rss)
	}
	sort.Slice(walls, func(a, b int) bool { return walls[a] < walls[b] })
	med := walls[len(walls)/2]
	if len(walls)%2 == 0 {
		med = (walls[len(walls)/2-1] + walls[len(walls)/2]) / 2
	}
	return Result{Runs: n, Median: med, Min: walls[0], MaxRSSKiB: maxRSS}, nil
}

func once(argv []string, stdoutPath string, stderr io.Writer) (time.Duration, int64, error) {
	f, err := os.OpenFile(stdoutPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = f
	// The child's chatter is shown only when it fails.
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	start := time.Now()
	if err := cmd.Run(); err != nil {
		stderr.Write(errOut.Bytes())
		return 0, 0, fmt.Errorf("%s: %w", argv[0], err)
	}
	wall := time.Since(start)
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // KiB on Linux
	}
	return wall, rss, nil
}
