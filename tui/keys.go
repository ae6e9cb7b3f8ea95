package tui

import "github.com/charmbracelet/bubbles/key"

// The key maps are data: Update dispatches with key.Matches on them and the
// footer and the ? view render them through bubbles/help, so a binding that
// is disabled (read-only mode) neither fires nor shows.

// listKeys move a cursor through a table.
type listKeys struct {
	Up, Down, PageUp, PageDown, Home, End key.Binding
}

func newListKeys() listKeys {
	return listKeys{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f"), key.WithHelp("pgdn", "page down")),
		Home:     key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "first")),
		End:      key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "last")),
	}
}

func (k listKeys) bindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}
}

// keyMap is every binding of the UI, grouped by the page that uses it.
// Signatures' Retry and Forget act on the marked signatures when any are
// marked, else on the one under the cursor; their Clear (esc) unmarks, and
// with nothing marked drops the filter. Jobs' Retry and Forget act on the
// marked jobs when any are marked; Back (esc) unmarks first. Confirm's Yes
// is disabled while the dry run says nothing would be retried; its Copy is
// enabled only while the dialog has an artisan command for the skipped jobs.
type keyMap struct {
	Global     struct{ Refresh, Help, Quit key.Binding }
	Signatures struct {
		listKeys
		Open, Filter, Retry, Forget, Mark, Sort, Copy, Clear key.Binding
	}
	Jobs struct {
		listKeys
		Open, Back, Filter, Retry, RetryAll, Forget, ForgetAll, Mark, Copy key.Binding
	}
	Detail    struct{ Up, Down, PageUp, PageDown, Top, Bottom, Section, Back, Retry, Forget, Copy key.Binding }
	Confirm   struct{ Yes, Copy, No key.Binding }
	Filter    struct{ Next, Prev, Apply, Cancel, Clear key.Binding }
	HelpClose key.Binding
}

func newKeyMap(readOnly bool) keyMap {
	var k keyMap
	g, s, j, d, c, f := &k.Global, &k.Signatures, &k.Jobs, &k.Detail, &k.Confirm, &k.Filter
	g.Refresh = key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "refresh"))
	g.Help = key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help"))
	g.Quit = key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit"))

	s.listKeys = newListKeys()
	s.Open = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jobs"))
	s.Filter = key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter"))
	s.Retry = key.NewBinding(key.WithKeys("r", "R"), key.WithHelp("r", "retry signature"))
	s.Forget = key.NewBinding(key.WithKeys("f", "F"), key.WithHelp("f", "forget signature"))
	s.Mark = key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark, next"))
	s.Sort = key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort"))
	s.Copy = key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy id"))
	s.Clear = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear marks/filter"))

	j.listKeys = newListKeys()
	j.Open = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail"))
	j.Back = key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back"))
	j.Retry = key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry job"))
	j.RetryAll = key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry signature"))
	j.Forget = key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "forget job"))
	j.ForgetAll = key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "forget signature"))
	j.Filter, j.Mark, j.Copy, d.Copy = s.Filter, s.Mark, s.Copy, s.Copy

	d.Up = key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up"))
	d.Down = key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down"))
	d.PageUp = key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up"))
	d.PageDown = key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down"))
	d.Top = key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top"))
	d.Bottom = key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom"))
	d.Section = key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "section"))
	d.Back, d.Retry, d.Forget = j.Back, j.Retry, j.Forget

	c.Yes = key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes"))
	c.Copy = key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy artisan command"), key.WithDisabled())
	c.No = key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no"))

	f.Next = key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next field"))
	f.Prev = key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous field"))
	f.Apply = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply"))
	f.Cancel = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel"))
	f.Clear = key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear field"))

	k.HelpClose = key.NewBinding(key.WithKeys("?", "esc", "q"), key.WithHelp("?/esc", "close help"))
	if readOnly {
		for _, b := range []*key.Binding{&s.Retry, &s.Forget, &j.Retry, &j.RetryAll, &j.Forget, &j.ForgetAll,
			&d.Retry, &d.Forget, &s.Mark, &j.Mark} {
			b.SetEnabled(false)
		}
	}
	return k
}

// pageHelp adapts one page's bindings to help.KeyMap: short then global is
// the footer, full (those plus the rest) is the ? view. On a narrow
// terminal the footer drops short bindings from the right; global ones
// (? help, q quit) stay.
type pageHelp struct {
	short  []key.Binding
	global []key.Binding
	more   []key.Binding
}

func (h pageHelp) ShortHelp() []key.Binding {
	return append(append([]key.Binding(nil), h.short...), h.global...)
}

func (h pageHelp) FullHelp() [][]key.Binding {
	return [][]key.Binding{h.ShortHelp(), h.more}
}

// helpFor is the key map of the page in state s.
func (k keyMap) helpFor(s state) pageHelp {
	g := []key.Binding{k.Global.Help, k.Global.Quit}
	switch s {
	case stateJobs:
		j := k.Jobs
		return pageHelp{
			short:  []key.Binding{j.Open, j.Back, j.Filter, j.Retry, j.Forget},
			global: g,
			more:   append(j.listKeys.bindings(), j.Mark, j.RetryAll, j.ForgetAll, j.Copy, k.Global.Refresh),
		}
	case stateDetail:
		d := k.Detail
		return pageHelp{
			short:  []key.Binding{d.Section, d.Back, d.Retry, d.Forget},
			global: g,
			more:   []key.Binding{d.Up, d.Down, d.PageUp, d.PageDown, d.Top, d.Bottom, d.Copy, k.Global.Refresh},
		}
	case stateConfirm:
		return pageHelp{global: []key.Binding{k.Confirm.Yes, k.Confirm.Copy, k.Confirm.No}}
	case stateFilter:
		f := k.Filter
		return pageHelp{short: []key.Binding{f.Next, f.Apply, f.Cancel, f.Clear}, more: []key.Binding{f.Prev}}
	case stateHelp:
		return pageHelp{global: []key.Binding{k.HelpClose, k.Global.Quit}}
	default:
		s := k.Signatures
		return pageHelp{
			short:  []key.Binding{s.Open, s.Filter, s.Retry, s.Forget},
			global: g,
			more:   append(s.listKeys.bindings(), s.Mark, s.Sort, s.Copy, s.Clear, k.Global.Refresh),
		}
	}
}
