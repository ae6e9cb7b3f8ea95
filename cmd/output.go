package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/dustin/go-humanize"
	"github.com/muesli/termenv"

	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// table prints rows aligned to the terminal with a header on a TTY, and as gh
// does, tab-separated without one when piped. Every cell is sanitised.
type table struct {
	io     *IOStreams
	header []string
	rows   [][]string
	subs   []string // an optional second line per row, shown on a TTY only
	flex   int      // the column that shrinks to fit the width
	styles []lipgloss.Style
	rend   *lipgloss.Renderer
}

// renderer styles output only when colour is enabled.
func renderer(io *IOStreams) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Out)
	if io.ColorEnabled() {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

// maxColumnWidth caps the columns but the flexible one, which other columns
// narrow down to shrinkFloor to give up to flexFloor cells.
const (
	maxColumnWidth = 40
	flexFloor      = 32
	shrinkFloor    = 16
)

func newTable(io *IOStreams, flex int, header ...string) *table {
	r := renderer(io)
	return &table{io: io, header: header, flex: flex, rend: r, styles: make([]lipgloss.Style, len(header))}
}

// style colours a column on a TTY.
func (t *table) style(col int, color string) {
	t.styles[col] = t.rend.NewStyle().Foreground(lipgloss.Color(color))
}

func (t *table) add(cells ...string) {
	for i := range cells {
		cells[i] = sanitize.Line(cells[i])
	}
	t.rows = append(t.rows, cells)
	t.subs = append(t.subs, "")
}

// sub sets the last row's second line, for long text such as an exception message.
func (t *table) sub(text string) {
	t.subs[len(t.subs)-1] = sanitize.Line(text)
}

func (t *table) render() error {
	w := t.io.Out
	if !t.io.IsStdoutTTY() {
		for _, r := range t.rows {
			if _, err := fmt.Fprintln(w, strings.Join(r, "\t")); err != nil {
				return err
			}
		}
		return nil
	}
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = sanitize.Width(h)
	}
	for _, r := range t.rows {
		for i, c := range r {
			if n := sanitize.Width(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	if t.flex >= 0 {
		// One long value (a hostile queue name) must not take every row's
		// room: the other columns are capped, their cells cut with "…".
		total := 0
		for i := range widths {
			if i != t.flex {
				widths[i] = min(widths[i], max(maxColumnWidth, sanitize.Width(t.header[i])))
				total += widths[i] + 2
			}
		}
		// Then, while the flexible column gets less than min(width,
		// flexFloor), the widest other column but the id (copied whole)
		// gives a cell, down to shrinkFloor or its header.
		for need := min(widths[t.flex], flexFloor); t.io.TerminalWidth()-total < need; total-- {
			j := -1
			for i := 1; i < len(widths); i++ {
				if i != t.flex && widths[i] > max(shrinkFloor, sanitize.Width(t.header[i])) && (j < 0 || widths[i] > widths[j]) {
					j = i
				}
			}
			if j < 0 {
				break
			}
			widths[j]--
		}
		if room := t.io.TerminalWidth() - total; room < widths[t.flex] {
			widths[t.flex] = max(room, 10)
		}
	}
	line := func(cells []string, header bool) string {
		var b strings.Builder
		for i, c := range cells {
			c = sanitize.Truncate(c, widths[i])
			pad := widths[i] - sanitize.Width(c)
			if header {
				c = t.rend.NewStyle().Bold(true).Render(c)
			} else if i < len(t.styles) {
				c = t.styles[i].Render(c)
			}
			b.WriteString(c)
			if i < len(cells)-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		return b.String()
	}
	if _, err := fmt.Fprintln(w, line(t.header, true)); err != nil {
		return err
	}
	dim := t.rend.NewStyle().Foreground(lipgloss.Color("252"))
	for i, r := range t.rows {
		if _, err := fmt.Fprintln(w, line(r, false)); err != nil {
			return err
		}
		if sub := t.subs[i]; sub != "" {
			sub = sanitize.Truncate(sub, max(t.io.TerminalWidth()-4, 20))
			if _, err := fmt.Fprintln(w, "    "+dim.Render(sub)); err != nil {
				return err
			}
		}
	}
	return nil
}

// timeCell shows "3 minutes ago" on a TTY and RFC 3339 when piped.
func timeCell(io *IOStreams, t, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	if io.IsStdoutTTY() {
		return humanize.RelTime(t, now, "ago", "from now")
	}
	return t.Format(time.RFC3339)
}

// writeJSON prints v as indented JSON (marshalJSON).
func writeJSON(w io.Writer, v any) error { return writeMarshalled(w, v, "  ") }

// writeJSONLine prints v as one NDJSON record (marshalJSON).
func writeJSONLine(w io.Writer, v any) error { return writeMarshalled(w, v, "") }

func writeMarshalled(w io.Writer, v any, indent string) error {
	b, err := marshalJSON(v, indent)
	if err == nil {
		_, err = w.Write(b)
	}
	return err
}

// marshalJSON is v as JSON ending in a newline, indented by indent ("" for
// one NDJSON record). Go's encoder escapes C0 control characters;
// sanitize.JSON escapes what it leaves raw (DEL, C1, bidi) and turns bytes
// that are not UTF-8 (a raw payload may hold them) into U+FFFD, so database
// text cannot reach the terminal raw and the output is valid JSON. <, > and
// & stay as they are ("<n>", "->"): the output is never embedded in HTML,
// and people read it.
func marshalJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return sanitize.JSON(buf.Bytes()), nil
}

// maxJSONDepth is encoding/json's nesting limit: json.Valid rejects deeper
// text and Marshal fails on a RawMessage holding it.
const maxJSONDepth = 10000

// rawPayload embeds a payload as JSON when encoding/json accepts it (invalid
// UTF-8 becomes U+FFFD), else as text with a note saying why (not JSON, or
// nested deeper than maxJSONDepth), so the command still prints.
func rawPayload(payload []byte) (raw json.RawMessage, text, note *string) {
	if json.Valid(payload) {
		return json.RawMessage(sanitize.JSON(payload)), nil, nil
	}
	why := "the payload is not valid JSON; payload_text holds it as text"
	if jsonDepthOver(payload, maxJSONDepth) {
		why = fmt.Sprintf("the payload nests deeper than %d levels, more than JSON tools accept; payload_text holds it as text", maxJSONDepth)
	}
	return nil, new(string(payload)), &why
}

// jsonDepthOver reports whether JSON text opens more than limit arrays or
// objects at once, counting brackets outside strings.
func jsonDepthOver(b []byte, limit int) bool {
	depth, inStr := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}

// examples indents help examples as cobra's own sections are indented.
func examples(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// countNoun is "1 failed job", "1,204 failed jobs" (the plural is noun+"s").
func countNoun[N ~int | ~int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return humanize.Comma(int64(n)) + " " + noun + "s"
}

// printNotFound says on stderr, as error lines, which of a bulk action's ids match no job.
func printNotFound(w io.Writer, ids []string) {
	for _, id := range ids {
		fmt.Fprintf(w, "jobtriage: not found: no failed job with id %s\n", sanitize.Line(id))
	}
}
