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
	"slices"
	"strings"
	"unicode/utf16"
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

// FirstLine keeps a message to its first line, trimmed, marking a cut
// with " …": drivers sometimes add detail lines, and a message is read in
// a terminal. It does not make the line safe; Line does.
func FirstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " " + Ellipsis
	}
	return s
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

// isPlain: s is printable ASCII only (the common case: no copy needed).
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

// JSON makes encoded JSON text safe to print and valid to parse: bytes that
// are not UTF-8 become U+FFFD, and every rune Line would escape that an
// encoder leaves raw (DEL, C1 controls, bidi and zero-width characters, line
// separators, tag characters) becomes a \uXXXX escape. Raw control bytes
// outside strings are JSON whitespace (\n, \t, \r) and are kept.
//
// The contract is that js is JSON text (an encoder's output, or a raw
// message json.Valid accepted): every non-ASCII rune then sits inside a
// string, where the escape means the same character, so the document
// decodes to the same values except that invalid bytes read as U+FFFD.
func JSON(js []byte) []byte {
	if !slices.ContainsFunc(js, func(c byte) bool { return c >= 0x7f }) {
		return js
	}
	out := make([]byte, 0, len(js)+16)
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case r < 0x7f:
			out = append(out, byte(r))
		case r == 0x7f || dangerous(r):
			out = appendJSONEscape(out, r)
		default:
			out = utf8.AppendRune(out, r)
		}
	}
	return out
}

func appendJSONEscape(out []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	one := func(out []byte, u uint16) []byte {
		return append(out, '\\', 'u', hex[u>>12], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
	}
	if r > 0xffff {
		r1, r2 := utf16.EncodeRune(r)
		return one(one(out, uint16(r1)), uint16(r2))
	}
	return one(out, uint16(r))
}

// Inert reports the first rune of s a terminal could act on, or that hides
// or reorders text: a control character other than "\n" and "\t", DEL, a C1
// control, a bidi, zero-width or tag character, or a byte that is not
// UTF-8 (reported as utf8.RuneError). ok is true when there is none, which
// is what every text Line and Text return satisfies.
func Inert(s string) (bad rune, at int, ok bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return r, i, false
		}
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || dangerous(r) {
			return r, i, false
		}
		i += size
	}
	return 0, 0, true
}
