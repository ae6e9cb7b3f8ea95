// Package detailview is a failed job's detail as people read it: the
// sections, their fields, labels, order and glyphs, laid out as lines.
// `jobtriage show` prints every section one after the other and the TUI
// shows one section per tab; both lay them out here, so they print the same
// text and differ only in colour and in where long lines wrap. It is pure:
// styling is the caller's, passed in as functions.
package detailview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// Section is one part of the detail: a TUI tab Name, a heading, lines.
type Section struct {
	Name  string
	Title string
	lines []line
}

// kind is what a line holds, which decides its layout and style.
type kind int

const (
	field    kind = iota // label, then value in the value column; note (a problem) after it
	text                 // value: text of one or more lines, as is
	muted                // value: a remark
	problem              // value: what could not be read, or an exception class; note (muted) after it
	appFrame             // value: a stack frame of the application: where the bug usually is
	vendorFrame
)

// line is one entry of a section; its strings are terminal-safe.
type line struct {
	kind         kind
	depth        int // indent levels
	label, value string
	note         string
}

const (
	labelWidth = 14  // the label column of a field
	none       = "–" // a value the payload does not set
	// appMark leads application frames, so they show where colour does not.
	appMark        = "→ "
	malformedShown = 2000 // bytes shown of a payload that is not JSON
	stampLayout    = "2006-01-02 15:04:05 MST"
	minWidth       = 10 // the narrowest a wrapped column gets
)

// Build lays d out. now dates the failure; frames caps the stack frames
// shown per exception (0 = all).
func Build(d triage.Detail, now time.Time, frames int) []Section {
	return []Section{summary(d, now), payloadSection(d), command(d), exceptions(d, frames)}
}

// fields adds "label value" lines, leaving out empty values.
func fields(lines []line, kv ...string) []line {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			lines = append(lines, line{kind: field, depth: 1, label: kv[i], value: sanitize.Line(kv[i+1])})
		}
	}
	return lines
}

func summary(d triage.Detail, now time.Time) Section {
	rel := ""
	if !d.FailedAt.IsZero() {
		rel = humanize.RelTime(d.FailedAt, now, "ago", "from now")
	}
	return Section{Name: "Summary", Title: "Failed job " + sanitize.Line(d.ID), lines: fields(nil,
		"Row id", strconv.FormatInt(d.RowID, 10),
		"Class", d.Class,
		"Connection", d.Connection,
		"Queue", d.Queue,
		"Failed at", d.FailedAt.Format(stampLayout)+" ("+rel+")",
		"Signature", d.Signature)}
}

func payloadSection(d triage.Detail) Section {
	s := Section{Name: "Payload", Title: "Payload"}
	if d.PayloadErr != nil {
		raw := string(d.Payload)
		if len(raw) > malformedShown {
			raw = raw[:malformedShown] + "…"
		}
		s.lines = []line{
			{kind: problem, depth: 1, value: sanitize.Line("malformed payload: " + d.PayloadErr.Error())},
			{kind: text, depth: 1, value: safeText(raw)},
		}
		return s
	}
	e := d.Envelope
	s.lines = fields(nil,
		"uuid", e.UUID,
		"displayName", e.DisplayName,
		"job", e.Job,
		"kind", e.Kind.String(),
		"maxTries", optInt(e.MaxTries, none),
		"maxExceptions", optInt(e.MaxExceptions, none),
		"timeout", optInt(e.Timeout, none),
		"backoff", cmp.Or(e.Backoff, none),
		"failOnTimeout", strconv.FormatBool(e.FailOnTimeout))
	if e.DeleteWhenMissingModels != nil {
		l := line{kind: field, depth: 1, label: "deleteWhenMissingModels", value: strconv.FormatBool(*e.DeleteWhenMissingModels)}
		if *e.DeleteWhenMissingModels {
			l.note = missingModelsNote
		}
		s.lines = append(s.lines, l)
	}
	loc := d.FailedAt.Location()
	until := line{kind: field, depth: 1, label: "retryUntil", value: cmp.Or(optStamp(e.RetryUntil, loc), none)}
	if d.RetryUntilExpired {
		until.note = "(expired: a retry would fail at once; retry --retry-until gives a new deadline)"
	}
	s.lines = fields(append(s.lines, until),
		"createdAt", optStamp(e.CreatedAt, loc),
		"delay", optSeconds(e.Delay),
		"batchId", e.BatchID,
		"attempts", optInt(e.Attempts, ""),
		"tags", strings.Join(e.Tags, ", "),
		"log:context", compactJSON(e.LogContext))
	return s
}

// missingModelsNote is what deleteWhenMissingModels true means for a retry.
const missingModelsNote = "(on Laravel 13 a retry whose model is gone is deleted by the worker, with no failure row)"

// optStamp is the epoch-seconds *p as a time in loc, or "" when nil.
func optStamp(p *int64, loc *time.Location) string {
	if p == nil {
		return ""
	}
	return time.Unix(*p, 0).In(loc).Format(stampLayout)
}

// optSeconds is *p as "Ns", or "" when nil.
func optSeconds(p *int64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatInt(*p, 10) + "s"
}

// compactJSON is raw on one line, or "" when there is none.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(raw) == 0 {
		return ""
	}
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func command(d triage.Detail) Section {
	s := Section{Name: "Command", Title: "Command"}
	l := line{kind: muted, depth: 1}
	switch d.Command {
	case triage.CommandNone:
		l.value = "none (a string job)"
	case triage.CommandPlain, triage.CommandDecrypted:
		if d.Command == triage.CommandDecrypted {
			s.Title += " (encrypted, decrypted with APP_KEY)"
		}
		l.kind, l.value = text, safeText(d.CommandText)
	case triage.CommandEncrypted:
		l.value = "encrypted (ShouldBeEncrypted); set APP_KEY (or run in the app directory) to decrypt it"
		if d.CommandErr != nil {
			l.value = sanitize.Line("encrypted, and APP_KEY did not decrypt it: " + d.CommandErr.Error())
		}
	case triage.CommandUnreadable:
		l.kind, l.value = problem, "not a PHP serialization"
		if d.CommandErr != nil {
			l.value = sanitize.Line("unreadable: " + d.CommandErr.Error())
		}
	}
	s.lines = []line{l}
	return s
}

// exceptions shows the chain as read: the one thrown, then those it wrapped.
func exceptions(d triage.Detail, frames int) Section {
	s := Section{Name: "Exception", Title: "Exception"}
	add := func(k kind, depth int, v string) { s.lines = append(s.lines, line{kind: k, depth: depth, value: v}) }
	if len(d.Chain) == 0 {
		if strings.TrimSpace(d.Exception) == "" {
			add(muted, 1, "No exception text was stored.")
		} else {
			add(text, 1, safeText(d.Exception))
		}
		return s
	}
	for i := len(d.Chain) - 1; i >= 0; i-- {
		e := d.Chain[i]
		class := line{kind: problem, depth: 1, value: sanitize.Line(e.Class)}
		if i < len(d.Chain)-1 {
			class.note = "(previous)"
		} else if i > 0 {
			class.note = "(thrown)"
		}
		s.lines = append(s.lines, class)
		if e.Message != "" {
			add(text, 2, safeText(e.Message))
		}
		if loc := e.Location(); loc != "" {
			add(text, 2, "at "+safeText(loc)) // a queued closure's source spans lines
		}
		for n, fr := range e.Frames {
			if frames > 0 && n >= frames {
				add(muted, 2, fmt.Sprintf("… %d more frames (--frames 0 shows all)", len(e.Frames)-n))
				break
			}
			k := appFrame
			if fr.Vendor {
				k = vendorFrame
			}
			// Whole: a frame in a queued closure spans the lines of its
			// source (the closure's pseudo-file, or its PHP 8.4 name).
			add(k, 2, "#"+strconv.Itoa(fr.Index)+" "+safeText(fr.Raw))
		}
		if i > 0 {
			add(text, 0, "")
		}
	}
	return s
}

// safeText is database text made safe, without trailing newlines.
func safeText(s string) string { return strings.TrimRight(sanitize.Text(s), "\n") }

// optInt is *p, or unset when p is nil.
func optInt(p *int, unset string) string {
	if p == nil {
		return unset
	}
	return strconv.Itoa(*p)
}

// Style colours the parts of a line; a nil function leaves them plain.
// Styling adds no text, so the text printed is the same however styled.
type Style struct {
	Title   func(string) string // a section's heading
	Label   func(string) string // a field's label
	Muted   func(string) string // remarks and an exception's place in the chain
	Problem func(string) string // problems, exception classes, a field's note
	App     func(string) string // application frames
	Vendor  func(string) string // vendor frames
}

// Layout is s as lines no wider than width cells, long ones wrapped under
// their column; width 0 wraps nothing.
func Layout(s Section, st Style, width int) []string {
	out := block(nil, "", "", st.Title, Wrap(s.Title, width))
	for _, l := range s.lines {
		pad := strings.Repeat("  ", l.depth)
		lead, under, style, noteStyle := pad, pad, st.Muted, st.Muted
		switch l.kind {
		case field:
			label := fmt.Sprintf("%-*s ", labelWidth, l.label)
			lead, under, style, noteStyle = pad+apply(st.Label, label), pad+strings.Repeat(" ", len(label)), nil, st.Problem
		case text:
			style = nil
		case problem:
			style = st.Problem
		// Frames wrap under their text, a little further in.
		case appFrame:
			lead, under, style = pad+appMark, pad+"    ", st.App
		case vendorFrame:
			lead, under, style = pad+"  ", pad+"    ", st.Vendor
		}
		out = block(out, lead, under, style, Wrap(l.value, cut(width, len(under))))
		out = withNote(out, l.note, under, noteStyle, width)
	}
	return out
}

func apply(f func(string) string, s string) string {
	if f == nil {
		return s
	}
	return f(s)
}

// block appends lines, styled, the first after lead, the others after pad.
func block(out []string, lead, pad string, style func(string) string, lines []string) []string {
	for i, l := range lines {
		if i > 0 {
			lead = pad
		}
		out = append(out, lead+apply(style, l))
	}
	return out
}

// withNote puts note after the last line, or under it after pad if too wide.
func withNote(out []string, note, pad string, style func(string) string, width int) []string {
	switch {
	case note == "":
		return out
	case width == 0 || ansi.StringWidth(out[len(out)-1])+1+ansi.StringWidth(note) <= width:
		out[len(out)-1] += " " + apply(style, note)
		return out
	}
	return block(out, pad, pad, style, Wrap(note, cut(width, len(pad))))
}

// cut is the width left after an indent, at least minWidth; 0 stays 0.
func cut(width, used int) int {
	if width == 0 {
		return 0
	}
	return max(width-used, minWidth)
}

// Wrap splits text into its lines, each hard-wrapped to width cells at
// words, and inside paths and class names at / and \ (width 0: only
// split); tabs become spaces so that widths stay true.
func Wrap(s string, width int) []string {
	if width == 0 {
		return strings.Split(s, "\n")
	}
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\t", "    "), "\n") {
		out = append(out, strings.Split(ansi.Wrap(l, width, `/\-`), "\n")...)
	}
	return out
}
