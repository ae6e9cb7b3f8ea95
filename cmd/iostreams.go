package cmd

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// IOStreams is the one place that knows about the terminal: whether stdout is
// a TTY (tables, relative times) or a pipe (TSV, RFC 3339), whether colour is
// allowed, and whether the operator can be asked (stdin and stdout terminals).
// It never queries the terminal: isatty, the window size and the environment.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool // NO_COLOR, or TERM=dumb
	// colorForce is CLICOLOR_FORCE set but not "0": colour on a pipe too.
	colorForce bool
	colorMode  string // --color: colorAuto ("" too), colorAlways or colorNever
	width      int
	// verbose is --verbose: notes that are not news (a connection whose
	// driver jobtriage cannot read, on every monitor run) go to stderr too.
	verbose bool
}

const (
	colorAuto   = "auto"   // a terminal, unless NO_COLOR; or CLICOLOR_FORCE
	colorAlways = "always" // whatever the environment says
	colorNever  = "never"
)

// registerColorFlag adds the root's persistent --color and --verbose flags.
func registerColorFlag(root *cobra.Command, s *IOStreams) {
	s.colorMode = colorAuto
	root.PersistentFlags().Var(textValue{&s.colorMode, "when", func(v string) error {
		if v != colorAuto && v != colorAlways && v != colorNever {
			return errors.New("want auto, always or never")
		}
		return nil
	}}, "color", "colour output: auto (a terminal, unless NO_COLOR; or CLICOLOR_FORCE), always or never")
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

// ColorEnabled: --color always or never decides; else NO_COLOR (TERM=dumb)
// turns colour off, then CLICOLOR_FORCE on, then a terminal on.
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
