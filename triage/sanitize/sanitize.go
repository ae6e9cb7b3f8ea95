// Package sanitize makes text that came out of a database safe to print on a
// terminal.
//
// Failed-job rows hold text written by whoever could make a job fail: an
// exception message may carry escape sequences that set the window title,
// write the clipboard (OSC 52), move the cursor or overwrite a line with a
// carriage return, and bidi overrides can make a class name read backwards.
// Every such character is replaced by a visible, inert escape (`\x1b`,
// `\u202e`), so an operator sees that it was there and the terminal never
// acts on it. Printable text, including non-ASCII letters and PHP class
// names with backslashes, is kept as it is.
package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// NewlineMark is what Line shows in place of a line break.
const NewlineMark = "⏎"

// Ellipsis is what Truncate appends when it cuts text.
const Ellipsis = "…"

// Line returns s as a single terminal-safe line: line breaks become "⏎",
// tabs become a space, and every control or invisible formatting character
// becomes a visible escape. Invalid UTF-8 becomes U+FFFD.
func Line(s string) string {
	return clean(s, false)
}

// Text is Line for multi-line text: it keeps "\n" and "\t" (a "\r\n" pair
// becomes "\n"); everything else is treated as Line treats it.
func Text(s string) string {
	return clean(s, true)
}

// Truncate makes s one safe line (as Line does) and cuts it to at most width
// terminal cells, ending with "…" when something was cut. Width is measured
// by grapheme, so wide CJK characters and emoji count as two cells.
func Truncate(s string, width int) string {
	if width <= 0 {
		return ""
	}
	line := Line(s)
	if ansi.StringWidth(line) <= width {
		return line
	}
	return ansi.Truncate(line, width, Ellipsis)
}

// Width is the number of terminal cells s occupies once made safe by Line.
func Width(s string) int {
	return ansi.StringWidth(Line(s))
}

func clean(s string, multiline bool) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
			i++
			continue
		}
		i += size
		switch {
		case r == '\r' && i < len(s) && s[i] == '\n':
			// A CRLF pair is one line break; the CR alone would be a
			// line-overwrite trick and is escaped below.
			continue
		case r == '\n':
			if multiline {
				b.WriteByte('\n')
			} else {
				b.WriteString(NewlineMark)
			}
		case r == '\t':
			if multiline {
				b.WriteByte('\t')
			} else {
				b.WriteByte(' ')
			}
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case dangerous(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isPlain reports whether s is printable ASCII only, the common case, which
// needs no copy.
func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// dangerous reports the non-ASCII runes a terminal may act on or that
// change how the surrounding text reads without being seen.
func dangerous(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f: // C1 controls: 0x9b is a one-byte CSI, 0x9d OSC
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f: // Arabic letter mark, LRM, RLM
		return true
	case r >= 0x202a && r <= 0x202e: // bidi embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff, r == 0x180e: // zero-width
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r == 0x00ad: // soft hyphen: invisible in most terminals
		return true
	case r >= 0xfff9 && r <= 0xfffb: // interlinear annotation controls
		return true
	case r >= 0xe0000 && r <= 0xe007f: // tag characters (invisible "ASCII smuggling")
		return true
	}
	return false
}
