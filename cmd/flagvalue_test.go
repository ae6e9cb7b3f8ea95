package cmd

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestParseDuration: one grammar for every duration — Go's units plus d
// and w, combined and fractional; a bare number is refused naming the units.
func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"90s": 90 * time.Second, "15m": 15 * time.Minute, "2h": 2 * time.Hour, "7d": 7 * 24 * time.Hour,
		"1w": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "1.5d": 36 * time.Hour, "1h30m": 90 * time.Minute,
		"500ms": 500 * time.Millisecond, "0": 0, " 2w ": 14 * 24 * time.Hour, "-1s": -time.Second,
	} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"10": "needs a unit: 10s, 10m, 10h, 10d or 10w", "1.5": "1.5h", "7x": "like 90s, 15m, 2h, 7d or 1w",
		"": "like 90s", "d": "like 90s", "1e3d": "like 90s", "1..5d": "like 90s", "inf": "like 90s",
	} {
		if _, err := parseDuration(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseDuration(%q): error %v, want one with %q", in, err, want)
		}
	}
}

// badValues holds, per placeholder (Value.Type) of the flag grammar, a value
// every flag of that kind refuses.
var badValues = map[string]string{
	"DURATION":  "7x",
	"N":         "many",
	"HOURS":     "abc",
	"WHEN":      "yesterdayish",
	"NAME":      "",
	"HOST:PORT": "127.0.0.1:99999",
	"names":     "a,,b",
}

// pflagScalars are pflag's own number and duration Values, whose errors
// are strconv's and time's ("time: unknown unit") and which know no d or w.
var pflagScalars = regexp.MustCompile(`^\*pflag\.(duration|u?int(8|16|32|64)?|float(32|64)|count)Value$`)

// TestEveryGrammarFlagRefusesABadValue walks every command's flags: none
// is a pflag number or duration (each reads the one grammar), and each flag
// of the grammar, given a bad value, exits 2 with one line naming the flag
// and an example before the hint at --help, with nothing on stdout.
func TestEveryGrammarFlagRefusesABadValue(t *testing.T) {
	h := newHarness(t, false)
	tested := map[string]bool{}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			name := strings.Join(append(slices.Clone(path), "--"+fl.Name), " ")
			if typ := fmt.Sprintf("%T", fl.Value); pflagScalars.MatchString(typ) {
				t.Errorf("%s is a %s: register it with the flag grammar (flagvalue.go)", name, typ)
			}
			bad, ok := badValues[fl.Value.Type()]
			if !ok {
				return
			}
			tested[fl.Value.Type()] = true
			h := newHarness(t, false)
			code := h.run(append(slices.Clone(path), "--"+fl.Name+"="+bad)...)
			lines := strings.Split(strings.TrimSuffix(h.errOut.String(), "\n"), "\n")
			if code != ExitUsage || len(lines) != 2 || h.out.Len() != 0 ||
				!strings.HasPrefix(lines[0], "jobtriage: invalid argument ") || !strings.Contains(lines[0], "--"+fl.Name+`" flag: `) ||
				!strings.Contains(lines[0], "like ") || !strings.HasPrefix(lines[1], "Run '") {
				t.Errorf("%s=%q: exit %d, stdout %q, stderr %q; want exit %d and one line naming the flag with an example",
					name, bad, code, h.out.String(), h.errOut.String(), ExitUsage)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub, append(slices.Clone(path), sub.Name()))
		}
	}
	walk(NewCmdRoot(h.f), nil)
	for typ := range badValues {
		if !tested[typ] {
			t.Errorf("no flag of type %s found: the walk missed the tree", typ)
		}
	}
}

// TestFlagGrammarCases: each value a user tried, taken or refused as the
// grammar says.
func TestFlagGrammarCases(t *testing.T) {
	day := 24 * time.Hour
	p := parseWith(t, NewCmdMonitor, "--watch", "--max-failed", "1", "--window", "7d", "--max-age", "1d",
		"--for", "1d", "--repeat", "1d", "--blind-after", "1d")
	if p.code != ExitOK {
		t.Errorf("monitor with days: exit %d %s", p.code, p.err)
	} else if o := p.opts; o.Window != 7*day || o.MaxAge != day || o.For != day || o.Repeat != day || o.BlindAfter != day {
		t.Errorf("monitor with days: %+v", o)
	}
	if p := parseWith(t, NewCmdRetry, "all", "--retry-until", "1d"); p.code != ExitOK || p.opts.RetryUntil != day {
		t.Errorf("retry --retry-until 1d: exit %d %s", p.code, p.err)
	}
	usageCases(t, NewCmdMonitor, map[string][]string{
		`"--max-age" flag: a duration needs a unit: 10s, 10m`:   {"--max-age", "10"},
		`"--listen" flag: want HOST:PORT with a port from 0 to`: {"--watch", "--listen", "127.0.0.1:99999"},
		`"--window" flag: want a duration like 90s`:             {"--window", "7x"},
	})
	usageCases(t, NewCmdPrune, map[string][]string{
		`"--hours" flag: want a number of hours like 24`: {"--hours", "abc"},
	})
	usageCases(t, NewCmdRetry, map[string][]string{
		`"--to-queue" flag: want a name like emails`:         {"all", "--to-queue", ""},
		`"--canary" flag: must be at least 1`:                {"all", "--canary", "0"},
		`"--queue" flag: want names like default,emails`:     {"--queue", ""},
		`"--since" flag: want a duration back from now like`: {"all", "--since", "10"},
		`--range "5-x": want FROM-TO`:                        {"--range", "5-x"},
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion", "tcsh"}, `unknown command "tcsh" for "jobtriage completion": choose a shell: bash, fish, powershell, zsh`},
		{[]string{"context", "lsit"}, `choose a command: list, show, use`},
		{[]string{"restore", "nonexist.ndjson", "--dsn", "sqlite::memory:"}, "cannot read nonexist.ndjson: no such file or directory"},
		{[]string{"monitor", "--watch", "--listen", "127.0.0.1:99999", "--dsn", "sqlite::memory:"}, `"--listen" flag`},
	} {
		h := newHarness(t, false)
		if code := h.run(tc.args...); code != ExitUsage || !strings.Contains(h.errOut.String(), tc.want) ||
			strings.Count(h.errOut.String(), "jobtriage: ") != 1 || h.out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit %d with %q", tc.args, code, h.out.String(), h.errOut.String(), ExitUsage, tc.want)
		}
	}
	if h := newHarness(t, false); h.run("completion") != ExitOK || !strings.Contains(h.out.String(), "Available Commands") {
		t.Errorf("completion alone: want its help, exit 0; got %q %q", h.out.String(), h.errOut.String())
	}
}

// TestRangeTakesRowIDsOnAUUIDTable: --range selects row ids, as `retry 7`
// takes them, on a table that addresses jobs by uuid.
func TestRangeTakesRowIDsOnAUUIDTable(t *testing.T) {
	h, _ := fakeHarness(t, false, 5)
	if code := h.run("retry", "--range", "1-3", "--dry-run", "--json"); code != ExitOK || !strings.Contains(h.out.String(), fakeUUID(3)) ||
		strings.Contains(h.out.String(), fakeUUID(4)) {
		t.Errorf("exit %d, stdout %q, stderr %q; want ids 1 to 3 retried", code, h.out.String(), h.errOut.String())
	}
}

// TestExitCodeTableIsTheCode: README's exit-code table lists exactly the
// ExitCode constants of errors.go.
func TestExitCodeTableIsTheCode(t *testing.T) {
	file, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var code []int
	for _, d := range file.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "ExitCode" {
					n, _ := strconv.Atoi(vs.Values[0].(*ast.BasicLit).Value)
					code = append(code, n)
				}
			}
		}
	}
	documented := readmeExitCodes(t)
	slices.Sort(code)
	slices.Sort(documented)
	if len(code) < 10 || !slices.Equal(code, documented) {
		t.Errorf("errors.go's exit codes %v, README's table %v", code, documented)
	}
}
