package tui

import (
	"io"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/jobtriage/jobtriage/triage/detailview"
)

// styles are built from one renderer bound to the output the program draws
// on, so colour follows that terminal (and NO_COLOR), not os.Stdout.
type styles struct {
	Header    lipgloss.Style
	Crumb     lipgloss.Style
	Muted     lipgloss.Style
	Alert     lipgloss.Style
	OK        lipgloss.Style
	ReadOnly  lipgloss.Style
	TableHead lipgloss.Style
	Selected  lipgloss.Style
	TabActive lipgloss.Style
	ErrorText lipgloss.Style
	Box       lipgloss.Style
	ErrorBox  lipgloss.Style
	Help      help.Styles
	// Detail styles the detail model's lines.
	Detail detailview.Style
	// Cursor is the text cursor of an input: a reversed space, or an
	// underscore where there is no styling to show one (NO_COLOR).
	Cursor string
}

func newStyles(r *lipgloss.Renderer) styles {
	accent := lipgloss.AdaptiveColor{Light: "4", Dark: "12"}
	muted := lipgloss.AdaptiveColor{Light: "8", Dark: "7"}
	red := lipgloss.AdaptiveColor{Light: "1", Dark: "9"}
	green := lipgloss.AdaptiveColor{Light: "2", Dark: "10"}
	yellow := lipgloss.AdaptiveColor{Light: "3", Dark: "11"}
	s := styles{
		Header:    r.NewStyle().Bold(true),
		Crumb:     r.NewStyle().Foreground(accent),
		Muted:     r.NewStyle().Foreground(muted),
		Alert:     r.NewStyle().Foreground(red).Bold(true),
		OK:        r.NewStyle().Foreground(green),
		ReadOnly:  r.NewStyle().Foreground(yellow).Bold(true),
		TableHead: r.NewStyle().Bold(true).Underline(true),
		Selected:  r.NewStyle().Reverse(true),
		TabActive: r.NewStyle().Bold(true).Reverse(true),
		ErrorText: r.NewStyle().Foreground(red),
		Box:       r.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1),
		ErrorBox:  r.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(red).Padding(0, 1),
	}
	render := func(st lipgloss.Style) func(string) string { return func(t string) string { return st.Render(t) } }
	s.Detail = detailview.Style{Title: render(r.NewStyle().Bold(true).Foreground(accent)), Label: render(s.Muted),
		Muted: render(s.Muted), Problem: render(s.Alert), App: render(s.Header),
		Vendor: render(r.NewStyle().Foreground(muted).Faint(true))}
	s.Cursor = s.Selected.Render(" ")
	if r.ColorProfile() == termenv.Ascii {
		s.Cursor = "_"
	}
	keys, descs := s.Header, s.Muted // bold keys, muted descriptions
	s.Help = help.Styles{ShortKey: keys, FullKey: keys, ShortDesc: descs, FullDesc: descs,
		ShortSeparator: descs, FullSeparator: descs, Ellipsis: descs}
	return s
}

// newRenderer binds a renderer to out; noColor forces plain text whatever
// the terminal claims (NO_COLOR is already honoured by termenv).
func newRenderer(out io.Writer, noColor bool) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(out)
	if noColor {
		r.SetColorProfile(termenv.Ascii)
	}
	return r
}
