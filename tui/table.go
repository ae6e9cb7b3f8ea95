package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// column is one column of a table: Min cells always, and a share of the
// spare width up to Max when Flex is set.
type column struct {
	Title string
	Min   int
	Max   int // 0: no limit
	Flex  bool
	// Weight is how many spare cells a flex column takes per round (0 is 1):
	// messages deserve more room than queue names.
	Weight int
	Right  bool
}

// fitColumns gives each column its width for a table width cells wide, one
// space between columns. Columns that do not fit even at Min are dropped from
// the right, so an 80-cell terminal loses the least useful columns first.
func fitColumns(cols []column, width int) []int {
	widths := make([]int, len(cols))
	used := 0
	n := 0
	for i, c := range cols {
		need := c.Min
		if i > 0 {
			need++
		}
		if used+need > width {
			break
		}
		used += need
		widths[i] = c.Min
		n++
	}
	spare := width - used
	for spare > 0 {
		grew := false
		for i := 0; i < n && spare > 0; i++ {
			for step := max(cols[i].Weight, 1); step > 0 && spare > 0; step-- {
				if !cols[i].Flex || (cols[i].Max > 0 && widths[i] >= cols[i].Max) {
					break
				}
				widths[i]++
				spare--
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	return widths
}

// cell makes database text one safe line exactly w cells wide.
func cell(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	t := sanitize.Truncate(s, w)
	pad := w - sanitize.Width(t)
	if pad <= 0 {
		return t
	}
	if right {
		return strings.Repeat(" ", pad) + t
	}
	return t + strings.Repeat(" ", pad)
}

// tableRow joins cells for the widths fitColumns chose; zero widths are
// dropped columns.
func tableRow(cols []column, widths []int, values []string) string {
	var b strings.Builder
	for i, w := range widths {
		if w == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(cell(values[i], w, cols[i].Right))
	}
	return b.String()
}

func tableHeader(cols []column, widths []int) string {
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.Title
	}
	return tableRow(cols, widths, titles)
}

// scrollOffset keeps cursor within a window of height rows starting at
// offset, moving the window as little as possible.
func scrollOffset(offset, cursor, height, total int) int {
	if height <= 0 {
		return 0
	}
	if cursor < offset {
		offset = cursor
	}
	if cursor >= offset+height {
		offset = cursor - height + 1
	}
	if max := total - height; offset > max {
		offset = max
	}
	if offset < 0 {
		offset = 0
	}
	return offset
}

// clampCursor keeps a cursor inside a list of n items.
func clampCursor(c, n int) int {
	if c >= n {
		c = n - 1
	}
	if c < 0 {
		c = 0
	}
	return c
}

// classTail fits a PHP class name into w cells by dropping the start, where
// the namespace is: "…\Jobs\SyncInvoice" says more than "App\Jobs\Sy…".
func classTail(class string, w int) string {
	line := sanitize.Line(class)
	cw := ansi.StringWidth(line)
	if w <= 0 || cw <= w {
		return line
	}
	return ansi.TruncateLeft(line, cw-w+1, "…")
}

// Every table row starts with a gutter: the cursor mark, the mark of a
// marked (space) row, and a space. The marks are characters, not styling,
// so the row r or f acts on stays visible under NO_COLOR, on a monochrome
// terminal and in a screen reader, where reverse video is stripped.
const (
	cursorMark  = "▌"
	markedMark  = "✓"
	gutterWidth = 3
	gutterBlank = "   "
)

// newMark, in the gutter's last cell, flags a signature first seen since
// the TUI's --new-since (or within the last trend window).
const newMark = "*"

func flaggedGutter(cursor, marked, isNew bool) string {
	c, s, n := " ", " ", " "
	if cursor {
		c = cursorMark
	}
	if marked {
		s = markedMark
	}
	if isNew {
		n = newMark
	}
	return c + s + n
}

// tableLine is one data row with its gutter; the cursor row is also drawn
// in reverse video where the terminal has it.
func (m Model) tableLine(row string, cursor, marked bool) string {
	return m.flaggedTableLine(row, cursor, marked, false)
}

// flaggedTableLine is tableLine with the new mark in the gutter.
func (m Model) flaggedTableLine(row string, cursor, marked, isNew bool) string {
	line := flaggedGutter(cursor, marked, isNew) + row
	if cursor {
		return m.st.Selected.Render(line)
	}
	return line
}
