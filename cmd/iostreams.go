package cmd

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams is the one place that knows about the terminal: whether stdout is
// a TTY (tables and relative times) or a pipe (TSV and RFC 3339), whether
// colour is allowed (NO_COLOR), and whether we may ask the operator a
// question (stdin and stdout both terminals).
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool
	width     int
}

// System returns the process's streams.
func System(getenv func(string) string) *IOStreams {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	io := &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  isTTY(os.Stdin),
		stdoutTTY: isTTY(os.Stdout),
		stderrTTY: isTTY(os.Stderr),
		// https://no-color.org: any non-empty value disables colour.
		noColor: getenv("NO_COLOR") != "" || getenv("TERM") == "dumb",
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

// SetStdoutTTY, SetStdinTTY and SetStderrTTY let tests pretend.
func (s *IOStreams) SetStdoutTTY(v bool) { s.stdoutTTY = v }
func (s *IOStreams) SetStdinTTY(v bool)  { s.stdinTTY = v }
func (s *IOStreams) SetStderrTTY(v bool) { s.stderrTTY = v }

// IsStdoutTTY reports whether output goes to a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether chatter goes to a terminal (progress only then).
func (s *IOStreams) IsStderrTTY() bool { return s.stderrTTY }

// CanPrompt reports whether the operator can answer a question.
func (s *IOStreams) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// ColorEnabled reports whether output may carry colour.
func (s *IOStreams) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// TerminalWidth is the width tables fit into (80 when unknown).
func (s *IOStreams) TerminalWidth() int {
	if s.width <= 0 {
		return 80
	}
	return s.width
}
