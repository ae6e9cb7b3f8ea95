package tui

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// showGoldens is where cmd keeps what `jobtriage show` prints for the rows
// of show-detail.json (cmd's TestShowText).
var showGoldens = filepath.Join("..", "cmd", "testdata")

// TestDetailAgreesWithShow renders each row of show's fixture as the TUI's
// tabs, in colour and at several widths, and compares them with what show
// prints for it: apart from colour and where lines break, the model's
// sections (every tab but the payload's JSON) must read the same, glyph for
// glyph.
func TestDetailAgreesWithShow(t *testing.T) {
	var fx struct {
		Now   time.Time
		Cases []struct {
			Name string
			Row  triagetest.Row
		}
	}
	if b, err := os.ReadFile(filepath.Join(showGoldens, "show-detail.json")); err != nil || json.Unmarshal(b, &fx) != nil {
		t.Fatalf("fixture: %v", err)
	}
	st := triagetest.New(triage.IDModeUUID, time.UTC)
	svc := &triage.Service{Store: st, Now: func() time.Time { return fx.Now }, Location: time.UTC}
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(termenv.TrueColor)
	styled := newStyles(r)
	// Layout is what may differ: indents, padding, line breaks.
	words := func(s string) string { return strings.Join(strings.Fields(ansi.Strip(s)), "") }
	for _, c := range fx.Cases {
		st.Add(c.Row)
		want, err := os.ReadFile(filepath.Join(showGoldens, "TestShowText", c.Name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := svc.Show(context.Background(), c.Row.UUID)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{40, 120} {
			p := detailPage{d: d}
			p.render(styled, fx.Now, w, 40)
			if p.tabs[len(p.tabs)-1] != jsonTab || !strings.Contains(p.rendered[0], "\x1b[") {
				t.Fatalf("%s: tabs %q, no colour in %q", c.Name, p.tabs, p.rendered[0])
			}
			got := strings.Join(p.rendered[:len(p.rendered)-1], "\n")
			for _, l := range strings.Split(got, "\n") {
				if ansi.StringWidth(l) > w {
					t.Errorf("%s: a line wider than %d columns: %q", c.Name, w, ansi.Strip(l))
				}
			}
			if words(got) != words(string(want)) {
				t.Errorf("%s at %d columns: the TUI's tabs read\n%s\nshow prints\n%s", c.Name, w, ansi.Strip(got), want)
			}
		}
	}
}
