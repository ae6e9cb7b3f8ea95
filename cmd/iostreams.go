package cmd

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// IOStreams is the one place that knows about the terminal: whether stdout is
// a TTY (tables and relative times) or a pipe (TSV and RFC 3339), whether
// colour is allowed (--color, NO_COLOR, CLICOLOR_FORCE), and whether we may
// ask the operator a question (stdin and stdout both terminals). It never
// queries the terminal: everything here comes from isatty, the window size
// ioctl and the environment.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool // NO_COLOR, or TERM=dumb
	// colorForce is CLICOLOR_FORCE set to anything but "0": colour even
	// when stdout is not a terminal (unless NO_COLOR).
	colorForce bool
	colorMode  colorMode // --color
	width      int
	// verbose is --verbose: notes that are not news (a connection whose
	// driver jobtriage cannot read, on every monitor run) go to stderr too.
	verbose bool
}

// colorMode is the --color flag's value.
type colorMode string

const (
	colorAuto   colorMode = "auto"   // a terminal, unless NO_COLOR; or CLICOLOR_FORCE
	colorAlways colorMode = "always" // whatever the environment says
	colorNever  colorMode = "never"
)

// String, Set and Type make colorMode a pflag.Value, so a bad value is a
// usage error naming the choices.
func (m *colorMode) String() string {
	if *m == "" {
		return string(colorAuto)
	}
	return string(*m)
}

func (m *colorMode) Set(v string) error {
	switch colorMode(v) {
	case colorAuto, colorAlways, colorNever:
		*m = colorMode(v)
		return nil
	}
	return fmt.Errorf("want auto, always or never")
}

func (m *colorMode) Type() string { return "when" }

// registerColorFlag adds the root's persistent --color flag.
func registerColorFlag(root *cobra.Command, s *IOStreams) {
	root.PersistentFlags().Var(&s.colorMode, "color",
		"colour output: auto (a terminal, unless NO_COLOR; or CLICOLOR_FORCE), always or never")
	root.PersistentFlags().BoolVar(&s.verbose, "verbose", false, "also print the notes that are not news, such as the connections monitor cannot see (doctor lists them)")
}

// Verbose reports whether --verbose was given.
func (s *IOStreams) Verbose() bool { return s.verbose }

// System returns the process's streams.
func System(getenv func(string) string) *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	io := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  isTTY(os.Stdin),
		stdoutTTY: isTTY(os.Stdout),
		stderrTTY: isTTY(os.Stderr),
		// https://no-color.org: any non-empty value disables colour.
		noColor:    getenv("NO_COLOR") != "" || getenv("TERM") == "dumb",
		colorForce: getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0",
	}
	if io.stdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
			io.width = w
		}
	}
	if getenv("JOBTRIAGE_FORCE_TTY") != "" {
		io.stdoutTTY = true
	}
	return io
}

// Test returns streams over buffers: not a TTY, no colour, 120 columns.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, noColor: true, width: 120}, in, out, errOut
}

// IsStdoutTTY reports whether output goes to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether chatter goes to a terminal (progress only then).
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether the operator can answer a question.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// ColorEnabled reports whether output may carry colour: --color always or
// never decides; otherwise NO_COLOR (or TERM=dumb) turns it off, then
// CLICOLOR_FORCE turns it on, then it is on for a terminal.
func (s *IOStreams) ColorEnabled() bool {
	switch s.colorMode {
	case colorAlways:
		return true
	case colorNever:
		return false
	}
	if s.noColor {
		return false
	}
	return s.colorForce || s.stdoutTTY
}

// TerminalWidth is the width tables fit into (80 when unknown).
func (s *IOStreams) TerminalWidth() int {
	if s.width <= 0 {
		return 80
	}
	return s.width
}
