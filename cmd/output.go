package cmd

import (
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

// table prints rows: aligned and fitted to the terminal on a TTY, with a
// header; tab-separated without a header when piped, as gh does, so that
// cut and awk see one record per line. Every cell is sanitised.
type table struct {
	io      *IOStreams
	header  []string
	rows    [][]string
	subs    []string // an optional second line per row, shown on a TTY only
	flex    int      // the column that shrinks to fit the width
	styles  []lipgloss.Style
	rend    *lipgloss.Renderer
	hasRows bool
}

// renderer styles output only when colour is enabled (TTY, no NO_COLOR).
func renderer(io *IOStreams) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Out)
	if io.ColorEnabled() {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}

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

// sub sets the second line of the last row: on a terminal, long text such
// as an exception message reads better on its own line than squeezed into
// a column.
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
	total := 0
	for i, wd := range widths {
		if i != t.flex {
			total += wd + 2
		}
	}
	if t.flex >= 0 {
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

// writeJSON prints v as indented JSON. Go's encoder escapes control
// characters, so database text cannot reach the terminal raw this way.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// examples indents help examples as cobra's own sections are indented.
func examples(s string) string {
	return indent(strings.TrimRight(s, "\n"), "  ")
}
