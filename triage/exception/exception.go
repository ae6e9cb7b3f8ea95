// Package exception parses the text PHP's Throwable::__toString produces,
// which is what Laravel stores in failed_jobs.exception.
//
// The text lists a chain innermost first: each exception is a header
// ("Class: message in file:line", or "Class in file:line" when the message is
// empty), "Stack trace:", numbered frames ending in "{main}", and the next
// (outer) exception follows after "\n\nNext ". The last block is the one that
// was thrown, the one operators care about.
//
// The parser never fails: text that does not look like PHP output still
// yields an Exception whose Message is the text, and a head cut off by the
// store (no "Stack trace:" yet) still yields the class and message.
package exception

import (
	"iter"
	"strconv"
	"strings"
)

// Frame is one "#N ..." line of a stack trace.
type Frame struct {
	Index int
	File  string // "" for {main}; "[internal function]" for frames without a file
	Line  int
	Call  string // "App\Jobs\X->handle()", "{main}", "array_map()"
	Raw   string // the line without its "#N " prefix
	// Vendor marks frames outside the application: files under /vendor/ or
	// /usr/share/php/, PHP internal functions and {main}.
	Vendor bool
}

// Exception is one block of the chain.
type Exception struct {
	Class   string
	Message string // may be empty or span several lines
	File    string
	Line    int
	Frames  []Frame
}

// Chain is the parsed text, in text order: the innermost (first thrown)
// exception first, the exception that reached Laravel last.
type Chain []Exception

const nextMarker = "\n\nNext "

// TraceMarker ends a block's header: Head needs no text after it.
const TraceMarker = "\nStack trace:"

// Parse reads the whole text. Empty or blank text gives an empty chain.
func Parse(text string) Chain {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var chain Chain
	for b := range blocks(text) {
		chain = append(chain, parseBlock(b))
	}
	return chain
}

// Top is the exception thrown (the last block); zero for an empty chain.
func (c Chain) Top() Exception {
	if len(c) == 0 {
		return Exception{}
	}
	return c[len(c)-1]
}

// TopBlock returns the text of the last "Next " block (without "Next "), or
// the whole text for one exception. (A boundary depends on where the block
// before began, so the scan runs forward.)
func TopBlock(text string) (top string) {
	for b := range blocks(text) {
		top = b
	}
	return top
}

// Head returns the class and a one-line message of the thrown exception. It
// works on a truncated head of the text, as long as the top block's header
// is in it. Line breaks inside the message become single spaces.
func Head(text string) (class, message string) {
	header, _, _ := strings.Cut(TopBlock(text), TraceMarker)
	e := parseHeader(header)
	return e.Class, oneLine(e.Message)
}

// Location renders "file:line", or "" when the file is unknown.
func (e Exception) Location() string {
	if e.File == "" {
		return ""
	}
	return e.File + ":" + strconv.Itoa(e.Line)
}

// blocks cuts the text at every "\n\nNext " right after a stack frame line;
// one inside a message follows no frame and stays in its block.
func blocks(text string) iter.Seq[string] {
	return func(yield func(string) bool) {
		start := 0
		for from := 0; ; {
			i := strings.Index(text[from:], nextMarker)
			if i < 0 {
				yield(text[start:])
				return
			}
			i += from
			if followsFrame(text[start:i]) {
				if !yield(text[start:i]) {
					return
				}
				start = i + len(nextMarker)
			}
			from = i + len(nextMarker)
		}
	}
}

// followsFrame reports whether the last line of s is a stack frame line.
func followsFrame(s string) bool {
	last := s[strings.LastIndexByte(s, '\n')+1:]
	_, ok := frameIndex(last)
	return ok
}

// parseBlock reads a block; a head cut before "Stack trace:" is all header.
func parseBlock(block string) Exception {
	header, trace, ok := strings.Cut(block, TraceMarker)
	e := parseHeader(header)
	if ok {
		e.Frames = parseFrames(trace)
	}
	return e
}

// parseHeader reads "Class: message in file:line" / "Class in file:line".
func parseHeader(h string) Exception {
	h = strings.TrimRight(h, "\r\n")
	var e Exception
	rest := h
	if n := classPrefix(h); n > 0 {
		switch {
		case strings.HasPrefix(h[n:], ": "):
			e.Class, rest = h[:n], h[n+2:]
		case strings.HasPrefix(h[n:], " in "):
			e.Class, rest = h[:n], h[n:]
		case n == len(h):
			e.Class, rest = h, ""
		}
	}
	e.Message = rest
	if msg, file, line, ok := cutLocation(rest); ok {
		e.Message, e.File, e.Line = msg, file, line
	}
	return e
}

// classPrefix returns the length of a PHP class name at the start of s, or 0.
func classPrefix(s string) int {
	n := 0
	for ; n < len(s); n++ {
		if c := s[n]; !(c == '\\' || c == '_' || c >= 0x80 || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (n > 0 && '0' <= c && c <= '9')) {
			break
		}
	}
	if n > 0 && s[n-1] == '\\' {
		return 0
	}
	return n
}

// cutLocation splits "message in file:line" at the last " in " whose tail
// is "file:digits". The message may be empty (rest starts with " in ").
func cutLocation(rest string) (msg, file string, line int, ok bool) {
	colon := strings.LastIndexByte(rest, ':')
	if colon < 0 {
		return "", "", 0, false
	}
	n, err := strconv.Atoi(rest[colon+1:])
	if err != nil || n < 0 {
		return "", "", 0, false
	}
	// A queued closure's "file" is its source code behind a pseudo-scheme
	// (laravel-serializable-closure://function () use (...) {...}): it spans
	// lines and may itself contain " in ", so it is found by its scheme.
	for _, scheme := range []string{" in laravel-serializable-closure://", " in closure://"} {
		if i := strings.Index(rest[:colon], scheme); i >= 0 {
			return rest[:i], rest[i+len(" in ") : colon], n, true
		}
	}
	in := strings.LastIndex(rest[:colon], " in ")
	if in < 0 {
		return "", "", 0, false
	}
	file = rest[in+len(" in ") : colon]
	if file == "" || strings.ContainsRune(file, '\n') {
		return "", "", 0, false
	}
	return rest[:in], file, n, true
}

// parseFrames reads the "#N " frames of a trace. A line that does not start
// a frame continues the one before it: a frame in a queued closure names the
// closure's pseudo-file (laravel-serializable-closure://function () {...}),
// and on PHP 8.4 the closure's name ({closure:<that file>:2}), both of which
// hold the closure's source, line breaks included. Lines before the first
// frame are dropped; a frame's trailing blank lines are not part of it.
func parseFrames(trace string) []Frame {
	var frames []Frame
	idx, start, end := -1, 0, 0 // the open frame and its text's span
	flush := func() {
		if idx >= 0 {
			raw := strings.TrimRight(trace[start:end], "\r\n")
			frames = append(frames, parseFrame(idx, raw))
		}
	}
	for pos := 0; pos <= len(trace); {
		eol := strings.IndexByte(trace[pos:], '\n')
		if eol < 0 {
			eol = len(trace) - pos
		}
		line := strings.TrimRight(trace[pos:pos+eol], "\r")
		if n, ok := frameIndex(line); ok {
			flush()
			idx, start = n, pos+strings.IndexByte(line, ' ')+1
		}
		end = pos + eol
		pos += eol + 1
	}
	flush()
	return frames
}

// frameIndex reads the N of a "#N " line.
func frameIndex(line string) (int, bool) {
	if len(line) < 3 || line[0] != '#' {
		return 0, false
	}
	sp := strings.IndexByte(line, ' ')
	if sp < 2 || sp > 10 {
		return 0, false
	}
	n, err := strconv.Atoi(line[1:sp])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

const internalFunction = "[internal function]"

func parseFrame(idx int, raw string) Frame {
	f := Frame{Index: idx, Raw: raw}
	switch {
	case raw == "{main}":
		f.Call, f.Vendor = raw, true
	case strings.HasPrefix(raw, internalFunction+": "):
		f.File, f.Call, f.Vendor = internalFunction, raw[len(internalFunction)+2:], true
	default:
		if file, line, call, ok := cutFileLine(raw); ok {
			f.File, f.Line, f.Call = file, line, call
			f.Vendor = isVendorFile(file)
		} else {
			f.Call = raw
		}
	}
	return f
}

// cutFileLine splits "file(line): call" at the first "(digits): ". Taking
// the first one keeps parentheses inside the call's arguments out of it.
func cutFileLine(raw string) (file string, line int, call string, ok bool) {
	for from := 0; from < len(raw); {
		i := strings.Index(raw[from:], "): ")
		if i < 0 {
			return "", 0, "", false
		}
		i += from
		open := strings.LastIndexByte(raw[:i], '(')
		if open > 0 {
			if n, err := strconv.Atoi(raw[open+1 : i]); err == nil && n >= 0 {
				return raw[:open], n, raw[i+3:], true
			}
		}
		from = i + 3
	}
	return "", 0, "", false
}

func isVendorFile(file string) bool {
	return strings.Contains(file, "/vendor/") || strings.HasPrefix(file, "/usr/share/php/") ||
		strings.Contains(file, `\vendor\`)
}

// oneLine joins the lines of a message with single spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return strings.TrimSpace(s)
	}
	return strings.Join(strings.Fields(s), " ")
}
