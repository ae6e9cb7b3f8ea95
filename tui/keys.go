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

// globalKeys work on every page.
type globalKeys struct {
	Refresh, Help, Quit key.Binding
}

// signatureKeys drive the signatures page. Retry and Forget act on the
// marked signatures when any are marked, else on the one under the cursor.
// Clear (esc) unmarks, and with nothing marked drops the filter.
type signatureKeys struct {
	listKeys
	Open, Filter, Retry, Forget, Mark, Sort, Copy, Clear key.Binding
}

// jobKeys drive the jobs of one signature. Retry and Forget act on the
// marked jobs when any are marked; Back (esc) unmarks first.
type jobKeys struct {
	listKeys
	Open, Back, Filter, Retry, RetryAll, Forget, ForgetAll, Mark, Copy key.Binding
}

// detailKeys drive the detail of one job.
type detailKeys struct {
	Up, Down, PageUp, PageDown, Top, Bottom, Section, Back, Retry, Forget, Copy key.Binding
}

// confirmKeys answer a confirmation. Yes is disabled while the dry run
// says nothing would be retried; Copy is enabled only while the dialog has
// an artisan command for the skipped jobs.
type confirmKeys struct {
	Yes, Copy, No key.Binding
}

// filterKeys drive the filter form.
type filterKeys struct {
	Next, Prev, Apply, Cancel, Clear key.Binding
}

// keyMap is every binding of the UI, grouped by the page that uses it.
type keyMap struct {
	Global     globalKeys
	Signatures signatureKeys
	Jobs       jobKeys
	Detail     detailKeys
	Confirm    confirmKeys
	Filter     filterKeys
	HelpClose  key.Binding
}

func newKeyMap(readOnly bool) keyMap {
	k := keyMap{
		Global: globalKeys{
			Refresh: key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "refresh")),
			Help:    key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
			Quit:    key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		},
		Signatures: signatureKeys{
			listKeys: newListKeys(),
			Open:     key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "jobs")),
			Filter:   key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
			Retry:    key.NewBinding(key.WithKeys("r", "R"), key.WithHelp("r", "retry signature")),
			Forget:   key.NewBinding(key.WithKeys("f", "F"), key.WithHelp("f", "forget signature")),
			Mark:     key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark, next")),
			Sort:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
			Copy:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy id")),
			Clear:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear marks/filter")),
		},
		Jobs: jobKeys{
			listKeys:  newListKeys(),
			Open:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
			Back:      key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
			Filter:    key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
			Retry:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry job")),
			RetryAll:  key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "retry signature")),
			Forget:    key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "forget job")),
			ForgetAll: key.NewBinding(key.WithKeys("F"), key.WithHelp("F", "forget signature")),
			Mark:      key.NewBinding(key.WithKeys(" "), key.WithHelp("space", "mark, next")),
			Copy:      key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy id")),
		},
		Detail: detailKeys{
			Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "scroll up")),
			Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "scroll down")),
			PageUp:   key.NewBinding(key.WithKeys("pgup", "ctrl+b"), key.WithHelp("pgup", "page up")),
			PageDown: key.NewBinding(key.WithKeys("pgdown", "ctrl+f", " "), key.WithHelp("pgdn", "page down")),
			Top:      key.NewBinding(key.WithKeys("home", "g"), key.WithHelp("g", "top")),
			Bottom:   key.NewBinding(key.WithKeys("end", "G"), key.WithHelp("G", "bottom")),
			Section:  key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "section")),
			Back:     key.NewBinding(key.WithKeys("esc", "backspace"), key.WithHelp("esc", "back")),
			Retry:    key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "retry job")),
			Forget:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "forget job")),
			Copy:     key.NewBinding(key.WithKeys("y"), key.WithHelp("y", "copy id")),
		},
		Confirm: confirmKeys{
			Yes:  key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
			Copy: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy artisan command"), key.WithDisabled()),
			No:   key.NewBinding(key.WithKeys("n", "N", "esc", "q"), key.WithHelp("n/esc", "no")),
		},
		Filter: filterKeys{
			Next:   key.NewBinding(key.WithKeys("tab", "down"), key.WithHelp("tab", "next field")),
			Prev:   key.NewBinding(key.WithKeys("shift+tab", "up"), key.WithHelp("shift+tab", "previous field")),
			Apply:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "apply")),
			Cancel: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "cancel")),
			Clear:  key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "clear field")),
		},
		HelpClose: key.NewBinding(key.WithKeys("?", "esc", "q"), key.WithHelp("?/esc", "close help")),
	}
	if readOnly {
		for _, b := range []*key.Binding{&k.Signatures.Retry, &k.Signatures.Forget, &k.Jobs.Retry,
			&k.Jobs.RetryAll, &k.Jobs.Forget, &k.Jobs.ForgetAll, &k.Detail.Retry, &k.Detail.Forget,
			&k.Signatures.Mark, &k.Jobs.Mark} {
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
