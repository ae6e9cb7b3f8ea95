package tui

import (
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// column is one column of a table. On a terminal too narrow for every
// column, the columns are given room by Rank, not from the left: each in
// turn is reserved its Want while it fits, a column that does not fit even
// at Min is dropped wherever it stands, and what is left over is shared by
// the flex columns. So an 80-cell terminal shows a job's class and message
// whole and drops the trend, instead of cutting the class to fit the trend.
type column struct {
	Title string
	Min   int
	Max   int // 0: no limit
	Flex  bool
	// Weight is how many spare cells a flex column takes per round (0 is 1):
	// messages deserve more room than queue names.
	Weight int
	Right  bool
	// Rank: lower ranks are given room first.
	Rank int
	// Want is the width the column is reserved before the columns of a
	// later rank get any (at least Min, at most Max); set per draw from
	// what the rows hold.
	Want int
	// Whole columns grow from Min straight to Max, or not at all: an id is
	// shown as its shortest unique prefix or whole, never cut between.
	Whole bool
}

// fitColumns gives each column its width for a table width cells wide, one
// space between columns; a dropped column's width is 0.
func fitColumns(cols []column, width int) []int {
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cols[order[a]].Rank < cols[order[b]].Rank })
	widths := make([]int, len(cols))
	used := 0
	for _, i := range order {
		c := cols[i]
		want := max(c.Min, c.Want)
		if c.Max > 0 {
			want = max(min(want, c.Max), c.Min)
		}
		sep := min(used, 1) // a space before every column but the first
		switch {
		case used+sep+want <= width:
			widths[i] = want
		case used+sep+c.Min <= width && !c.Whole:
			widths[i] = width - used - sep
		case used+sep+c.Min <= width:
			widths[i] = c.Min
		default:
			continue
		}
		used += sep + widths[i]
	}
	spare := width - used
	for _, i := range order {
		if c := cols[i]; c.Whole && widths[i] > 0 && c.Max > widths[i] && spare >= c.Max-widths[i] {
			spare -= c.Max - widths[i]
			widths[i] = c.Max
		}
	}
	for spare > 0 {
		grew := false
		for i := 0; i < len(cols) && spare > 0; i++ {
			for step := max(cols[i].Weight, 1); step > 0 && spare > 0; step-- {
				if widths[i] == 0 || !cols[i].Flex || cols[i].Whole || (cols[i].Max > 0 && widths[i] >= cols[i].Max) {
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

// contentWidth is the widest of values once made safe, at least the
// title's width.
func contentWidth(title string, values []string) int {
	w := sanitize.Width(title)
	for _, v := range values {
		w = max(w, sanitize.Width(v))
	}
	return w
}

// fitContent sizes a flex column to what it holds: it wants, and grows to,
// no more than its widest value (within its Min and Max), so the spare room
// goes to the columns whose text is longer.
func fitContent(c *column, values []string) {
	w := max(contentWidth(c.Title, values), c.Min)
	if c.Max > 0 {
		w = min(w, c.Max)
	}
	c.Want, c.Max = w, w
}

// minIDPrefix is the shortest id prefix shown, however unique a shorter
// one would be: as git's abbreviated hashes, short enough to read, long
// enough to stay unique as more rows load.
const minIDPrefix = 8

// uniquePrefixLen is the length of the shortest prefix (at least
// minIDPrefix) that tells the ids apart, at most the longest id.
func uniquePrefixLen(ids []string) int {
	sorted := slices.Sorted(slices.Values(ids))
	n, longest := minIDPrefix, 0
	for i, id := range sorted {
		longest = max(longest, len(id))
		if i == 0 {
			continue
		}
		prev, common := sorted[i-1], 0
		for common < len(prev) && common < len(id) && prev[common] == id[common] {
			common++
		}
		n = max(n, common+1)
	}
	return min(n, max(longest, 1))
}

// cell makes database text one safe line exactly w cells wide.
func cell(s string, w int, right bool) string {
	if w <= 0 {
		return ""
	}
	t := sanitize.Truncate(s, w)
	pad := strings.Repeat(" ", max(w-sanitize.Width(t), 0))
	if right {
		return pad + t
	}
	return t + pad
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

// firstRow is the first of height rows shown of total so that cursor is
// among them: the table scrolls only as far as the cursor needs.
func firstRow(cursor, height, total int) int {
	return max(min(cursor-height+1, total-height), 0)
}

// clampCursor keeps a cursor inside a list of n items.
func clampCursor(c, n int) int { return max(min(c, n-1), 0) }

// rows are a table page's items, its cursor, and the items space marked
// (by id) for a bulk retry or forget.
type rows[T triage.Job | triage.Signature] struct {
	items  []T
	cursor int
	marked map[string]T
}

func rowID(v any) string {
	if j, ok := v.(triage.Job); ok {
		return j.ID
	}
	return v.(triage.Signature).ID
}

// current is the item under the cursor.
func (r rows[T]) current() (T, bool) {
	if r.cursor < 0 || r.cursor >= len(r.items) {
		var none T
		return none, false
	}
	return r.items[r.cursor], true
}

// set replaces the items; the cursor stays on the item it was on when that
// is still listed.
func (r *rows[T]) set(items []T) {
	keep, ok := r.current()
	r.items = items
	r.cursor = clampCursor(r.cursor, len(items))
	for i, v := range items {
		if ok && rowID(v) == rowID(keep) {
			r.cursor = i
			return
		}
	}
}

// toggle marks or unmarks the item under the cursor and steps down, so
// space space space marks a run of rows.
func (r *rows[T]) toggle() {
	if v, ok := r.current(); ok {
		if _, on := r.marked[rowID(v)]; on {
			delete(r.marked, rowID(v))
		} else {
			if r.marked == nil {
				r.marked = map[string]T{}
			}
			r.marked[rowID(v)] = v
		}
	}
	r.cursor = clampCursor(r.cursor+1, len(r.items))
}

// chosen are what r and f act on: the marked items in list order (then,
// with unlisted, marked ones the list no longer holds), else the one under
// the cursor.
func (r rows[T]) chosen(unlisted bool) []T {
	var out []T
	listed := map[string]bool{}
	for _, v := range r.items {
		if _, on := r.marked[rowID(v)]; on {
			out, listed[rowID(v)] = append(out, v), true
		}
	}
	for id, v := range r.marked {
		if unlisted && !listed[id] {
			out = append(out, v)
		}
	}
	if v, ok := r.current(); ok && len(out) == 0 {
		out = []T{v}
	}
	return out
}

// drop applies an action at once: keep changes an item and says whether
// it stays. The cursor stays on its item, or on the one that took its
// place.
func (r *rows[T]) drop(keep func(*T) bool) {
	cur, _ := r.current()
	kept := r.items[:0:0]
	before := 0 // kept rows above the cursor
	for i, v := range r.items {
		if !keep(&v) {
			delete(r.marked, rowID(v))
			continue
		}
		if i < r.cursor {
			before++
		}
		kept = append(kept, v)
	}
	r.items = kept
	r.cursor = clampCursor(before, len(kept))
	for i, v := range kept {
		if rowID(v) == rowID(cur) {
			r.cursor = i
		}
	}
}

// table draws the header of cols and the rows around the cursor, at most
// height of them; line draws item i in the widths the columns were given.
func (m Model) table(cols []column, n, cursor, height int, line func(i int, widths []int) string) []string {
	widths := fitColumns(cols, m.width-gutterWidth)
	lines := []string{m.st.TableHead.Render(gutterBlank + tableHeader(cols, widths))}
	for i := firstRow(cursor, height, n); i < n && len(lines) <= height; i++ {
		lines = append(lines, line(i, widths))
	}
	return lines
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

// tableLine is one data row with its gutter; the cursor row is also drawn
// in reverse video where the terminal has it.
func (m Model) tableLine(row string, cursor, marked, isNew bool) string {
	line := gutterMark(cursor, cursorMark) + gutterMark(marked, markedMark) + gutterMark(isNew, newMark) + row
	if cursor {
		return m.st.Selected.Render(line)
	}
	return line
}

func gutterMark(on bool, mark string) string {
	if on {
		return mark
	}
	return " "
}
