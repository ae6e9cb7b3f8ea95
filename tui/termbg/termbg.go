// Package termbg decides whether a terminal has a dark background, the one
// terminal query the TUI needs (lipgloss.AdaptiveColor picks its shade from
// it), within a bounded time.
//
// lipgloss would ask through termenv, which waits up to termenv.OSCTimeout
// (5 s) for a terminal that never answers (script, docker exec -t, kubectl
// exec -t), and whose answer bubbletea's input reader can steal once the
// program runs. jobtriage's bubbletea fork (third_party/bubbletea) no longer
// asks at package initialisation, so the TUI calls Dark before
// tea.NewProgram and gives the answer to its renderers explicitly.
package termbg

import (
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Timeout is the longest Dark waits for a terminal's answer: long enough for
// a local terminal or an SSH session, short enough that a terminal that
// never answers costs nothing an operator notices.
const Timeout = 100 * time.Millisecond

// Dark reports whether the background is dark, deciding in this order:
//
//   - COLORFGBG ("15;0": foreground;background, set by rxvt, Konsole and
//     others): a background of ANSI 7 or 15 is light, anything else dark;
//   - when in and out are both terminals and TERM is not screen*, tmux* or
//     dumb (termenv's rule: multiplexers may relay to several terminals): an
//     OSC 11 query answered within timeout;
//   - otherwise dark, as termenv assumes (a black background).
//
// It never waits longer than timeout. Callers that will not use the answer
// (no colour) must not call it: it writes a query to the terminal.
func Dark(in io.Reader, out io.Writer, getenv func(string) string, timeout time.Duration) bool {
	if dark, ok := fromCOLORFGBG(getenv("COLORFGBG")); ok {
		return dark
	}
	term := getenv("TERM")
	if strings.HasPrefix(term, "screen") || strings.HasPrefix(term, "tmux") || strings.HasPrefix(term, "dumb") {
		return true
	}
	fin, okIn := in.(*os.File)
	fout, okOut := out.(*os.File)
	if okIn && okOut {
		if reply, ok := query(fin, fout, timeout); ok {
			if dark, ok := fromOSC11(reply); ok {
				return dark
			}
		}
	}
	return true
}

// fromCOLORFGBG reads the background index of "fg;bg" or "fg;default;bg".
func fromCOLORFGBG(v string) (dark, ok bool) {
	i := strings.LastIndexByte(v, ';')
	if i < 0 {
		return false, false
	}
	bg, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return false, false
	}
	return bg != 7 && bg != 15, true
}

// fromOSC11 parses the xterm answer "ESC ] 11 ; rgb:RRRR/GGGG/BBBB" (1 to 4
// hex digits a channel, terminated by BEL or ST) and reports whether its
// relative luminance is below one half.
func fromOSC11(s string) (dark, ok bool) {
	i := strings.Index(s, "rgb:")
	if i < 0 {
		return false, false
	}
	s = s[i+len("rgb:"):]
	if j := strings.IndexAny(s, "\a\x1b"); j >= 0 {
		s = s[:j]
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return false, false
	}
	var ch [3]float64
	for k, p := range parts {
		if len(p) == 0 || len(p) > 4 {
			return false, false
		}
		n, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return false, false
		}
		ch[k] = float64(n) / float64(uint64(1)<<(4*len(p))-1)
	}
	// Rec. 709 luma of the (gamma-encoded) channels: close enough to tell
	// a dark background from a light one.
	l := 0.2126*ch[0] + 0.7152*ch[1] + 0.0722*ch[2]
	return l < 0.5, true
}
