// Package benchstore opens a jobtriage store from a DSN and times repeated
// calls, for the bench helpers that measure library paths the CLI cannot
// expose on their own (a watch tick, the TUI's first screen).
package benchstore

import (
	"context"
	"fmt"
	"io"
	"slices"
	"syscall"
	"time"

	"github.com/jobtriage/jobtriage/internal/appprofile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// Open opens the store behind dsn (postgres://…, mysql://…, sqlite:PATH)
// with the defaults the CLI uses, and a Service over it in UTC.
func Open(ctx context.Context, dsn string) (*sqlstore.Store, *triage.Service, error) {
	t, err := appprofile.ParseDSN(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("-dsn: %w", err)
	}
	st, err := sqlstore.Open(ctx, sqlstore.Config{
		Endpoint: sqlstore.Endpoint{Driver: t.Driver, Host: t.Host, Port: t.Port, Database: t.Database,
			User: t.User, Password: t.Password, Socket: t.Socket, Path: t.Path, Params: t.Params},
		Location: time.UTC,
	})
	if err != nil {
		return nil, nil, err
	}
	return st, &triage.Service{Store: st, Now: time.Now, Location: time.UTC}, nil
}

// Time runs fn warmup times unmeasured, then n times, and returns the
// measured durations. The first error stops it.
func Time(warmup, n int, fn func() error) ([]time.Duration, error) {
	for range warmup {
		if err := fn(); err != nil {
			return nil, err
		}
	}
	took := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := fn(); err != nil {
			return took, err
		}
		took = append(took, time.Since(start))
	}
	return took, nil
}

// Report writes one line in bench/measure's format: label, runs, median
// and min seconds, and this process's peak RSS in MiB so far.
func Report(w io.Writer, label string, took []time.Duration) error {
	if len(took) == 0 {
		return fmt.Errorf("%s: no runs", label)
	}
	s := slices.Clone(took)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	var ru syscall.Rusage
	rss := "-"
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rss = fmt.Sprintf("%.1f", float64(ru.Maxrss)/1024) // Linux: KiB
	}
	_, err := fmt.Fprintf(w, "%s\t%d\t%.4f\t%.4f\t%s\n", label, len(s), med.Seconds(), s[0].Seconds(), rss)
	return err
}
