package cmd

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/jobtriage/jobtriage/alerts"
	"github.com/jobtriage/jobtriage/triage"
)

// The flag grammar: every value a flag takes is read by a pflag.Value below
// (name lists by nameList) while the command line is parsed, so a bad one is
// refused before anything runs, in pflag's one line (`invalid argument "7x"
// for "--window" flag: want …`), exit 2. Type is help's placeholder.

// durationValue is a duration flag: parseDuration's grammar.
type durationValue struct{ p *time.Duration }

// durationVar registers a duration flag whose default is def.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, def time.Duration, usage string) {
	*p = def
	fs.Var(durationValue{p}, name, usage)
}

func (v durationValue) Set(s string) error {
	d, err := parseDuration(s)
	if err != nil {
		return err
	}
	*v.p = d
	return nil
}

// String is the duration as it is written on a command line ("0" for
// none, which help then does not print as a default).
func (v durationValue) String() string {
	if v.p == nil || *v.p == 0 {
		return "0"
	}
	return alerts.FormatDuration(*v.p)
}

func (durationValue) Type() string { return "DURATION" }

// countValue is a whole-number flag of at least min.
type countValue[T int | int64] struct {
	p   *T
	min T
}

// countVar registers a count flag: default def, at least min.
func countVar[T int | int64](fs *pflag.FlagSet, p *T, name string, def, min T, usage string) {
	*p = def
	fs.Var(countValue[T]{p, min}, name, usage)
}

// countVarP is countVar with a shorthand letter.
func countVarP[T int | int64](fs *pflag.FlagSet, p *T, name, short string, def, min T, usage string) {
	*p = def
	fs.VarP(countValue[T]{p, min}, name, short, usage)
}

func (v countValue[T]) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || int64(T(n)) != n {
		return fmt.Errorf("want a whole number like %d", v.example())
	}
	switch {
	case T(n) < v.min && v.min == 0:
		return fmt.Errorf("must not be negative; want a whole number like %d", v.example())
	case T(n) < v.min:
		return fmt.Errorf("must be at least %d; want a whole number like %d", v.min, v.example())
	}
	*v.p = T(n)
	return nil
}

// example is a value the flag takes, for its error message.
func (v countValue[T]) example() T {
	if v.min > 10 {
		return v.min
	}
	return 10
}

func (v countValue[T]) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*v.p), 10)
}

func (countValue[T]) Type() string { return "N" }

// hoursValue is a number of hours, fractions allowed (as queue:prune --hours).
type hoursValue struct{ p *float64 }

func hoursVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(hoursValue{p}, name, usage)
}

func (v hoursValue) Set(s string) error {
	h, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || h != h { // NaN is no number of hours
		return errors.New("want a number of hours like 24 or 1.5")
	}
	*v.p = h
	return nil
}

func (v hoursValue) String() string {
	if v.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*v.p, 'f', -1, 64)
}

func (hoursValue) Type() string { return "HOURS" }

// textValue is a string flag checked when parsed and read later with the
// same parser (a time bound needs the app's timezone, known once it opens).
type textValue struct {
	p     *string
	typ   string
	check func(string) error
}

func (v textValue) Set(s string) error {
	if err := v.check(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

func (v textValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v textValue) Type() string { return v.typ }

// timeVar registers a time-bound flag (--since, --until, --new-since):
// parseTimeBound's grammar, a duration back from now or a timestamp.
func timeVar(fs *pflag.FlagSet, p *string, name, usage string) {
	fs.Var(textValue{p, "WHEN", checkTimeBound}, name, usage)
}

// checkTimeBound is parseTimeBound's verdict, independent of clock and zone.
func checkTimeBound(s string) error {
	if _, err := parseTimeBound(s, time.Time{}, time.UTC); err != nil {
		return errors.New("want a duration back from now like 30m, 6h, 7d or 2w, or a time like 2026-11-30 14:00:00")
	}
	return nil
}

// trendWindowVar registers a trend window flag (failed --group --window,
// tui --trend-window): a duration above 0, at most triage.MaxTrendWindow.
func trendWindowVar(fs *pflag.FlagSet, p *string, name, def, usage string) {
	*p = def
	fs.Var(textValue{p, "DURATION", func(s string) error { _, err := trendWindowOf(s); return err }}, name, usage)
}

// trendWindowOf reads a trend window.
func trendWindowOf(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil || d <= 0 || d > triage.MaxTrendWindow {
		return 0, fmt.Errorf("want a duration above 0 and at most %s, like 30m, 6h or 1d", alerts.FormatDuration(triage.MaxTrendWindow))
	}
	return d, nil
}

// nameVar registers a flag naming one thing (a queue): empty names nothing.
func nameVar(fs *pflag.FlagSet, p *string, name, example, usage string) {
	fs.Var(textValue{p, "NAME", func(s string) error {
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("want a name like %s (an empty one names nothing)", example)
		}
		return nil
	}}, name, usage)
}

// addressVar registers a HOST:PORT flag to listen on (an empty host: every interface).
func addressVar(fs *pflag.FlagSet, p *string, name, usage string) {
	fs.Var(textValue{p, "HOST:PORT", checkListenAddress}, name, usage)
}

func checkListenAddress(s string) error {
	_, port, err := net.SplitHostPort(s)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || n > 65535 {
		return errors.New("want HOST:PORT with a port from 0 to 65535, like 127.0.0.1:9187")
	}
	return nil
}

// errBareNumber refuses a duration without a unit, naming the units.
func errBareNumber(n string) error {
	return fmt.Errorf("a duration needs a unit: %[1]ss, %[1]sm, %[1]sh, %[1]sd or %[1]sw", n)
}

// errDuration is the message for any other text that is no duration.
var errDuration = errors.New("want a duration like 90s, 15m, 2h, 7d or 1w (units combine: 1h30m)")
