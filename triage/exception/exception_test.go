package exception

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixtures are real (string)$e texts from PHP 8.2 + Laravel 8.83,
// produced by triage/payload/testdata/gen/gen.php.
func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const genFile = "/work/main/triage/payload/testdata/gen/gen.php"

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file        string
		wantClasses []string
		wantTop     Exception // Frames not compared here
		wantFrames  int       // of the top exception
	}{
		{
			file:        "chained.txt",
			wantClasses: []string{"LogicException", "RuntimeException"},
			wantTop:     Exception{Class: "RuntimeException", Message: "Podcast service unavailable", File: genFile, Line: 145},
			wantFrames:  10,
		},
		{
			file:        "empty_message.txt",
			wantClasses: []string{"RuntimeException"},
			wantTop:     Exception{Class: "RuntimeException", Message: "", File: genFile, Line: 152},
			wantFrames:  10,
		},
		{
			file:        "multiline.txt",
			wantClasses: []string{"InvalidArgumentException"},
			wantTop: Exception{Class: "InvalidArgumentException",
				Message: "Validation failed:\n - email is required\n - name is too long\n\nPlease fix the input.",
				File:    genFile, Line: 158},
			wantFrames: 10,
		},
		{
			file:        "max_attempts.txt",
			wantClasses: []string{`Illuminate\Queue\MaxAttemptsExceededException`},
			wantTop: Exception{Class: `Illuminate\Queue\MaxAttemptsExceededException`,
				Message: `App\Jobs\ProcessPodcast has been attempted too many times or run too long. The job may have previously timed out.`,
				File:    genFile, Line: 164},
			wantFrames: 10,
		},
		{
			file:        "model_not_found.txt",
			wantClasses: []string{`Illuminate\Database\Eloquent\ModelNotFoundException`},
			wantTop: Exception{Class: `Illuminate\Database\Eloquent\ModelNotFoundException`,
				Message: `No query results for model [App\Models\Order] 1042`, File: genFile, Line: 170},
			wantFrames: 10,
		},
		{
			file:        "query_exception.txt",
			wantClasses: []string{"PDOException", `Illuminate\Database\QueryException`},
			wantTop: Exception{Class: `Illuminate\Database\QueryException`,
				Message: `SQLSTATE[HY000]: General error: 1 no such table: orders (SQL: select * from "orders" where "id" = 1042 limit 1)`,
				File:    "/usr/share/php/Illuminate/Database/Connection.php", Line: 712},
			wantFrames: 11,
		},
		{
			file:        "three_chain.txt",
			wantClasses: []string{"DomainException", "UnexpectedValueException", "RuntimeException"},
			wantTop:     Exception{Class: "RuntimeException", Message: "level three\nwith a second line", File: genFile, Line: 190},
			wantFrames:  3,
		},
		{
			file:        "internal_frame.txt",
			wantClasses: []string{"RuntimeException"},
			wantTop: Exception{Class: "RuntimeException",
				Message: "Order 1042 not found in /var/www/app/Orders.php:12 (cache miss)", File: genFile, Line: 197},
			wantFrames: 5,
		},
		// Constructed from what Laravel 10+ and 13.31 on PHP 8.4 write (a
		// timeout of its own class; closures named {closure:scope:line}).
		{
			file:        "php84_timeout.txt",
			wantClasses: []string{`Illuminate\Queue\TimeoutExceededException`},
			wantTop: Exception{Class: `Illuminate\Queue\TimeoutExceededException`, Message: `App\Jobs\TimesOut has timed out.`,
				File: "/usr/share/php/Illuminate/Queue/TimeoutExceededException.php", Line: 15},
			wantFrames: 10,
		},
		{
			file:        "php84_closure.txt",
			wantClasses: []string{"RuntimeException"},
			wantTop: Exception{Class: "RuntimeException", Message: "escalation for ticket OPS-9 failed",
				File: closureFile, Line: 4},
			wantFrames: 9,
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			text := readFixture(t, tt.file)
			chain := Parse(text)
			var classes []string
			for _, e := range chain {
				classes = append(classes, e.Class)
			}
			if diff := cmp.Diff(tt.wantClasses, classes); diff != "" {
				t.Errorf("classes (-want +got):\n%s", diff)
			}
			top := chain.Top()
			if got := len(top.Frames); got != tt.wantFrames {
				t.Errorf("top has %d frames, want %d", got, tt.wantFrames)
			}
			top.Frames = nil
			if diff := cmp.Diff(tt.wantTop, top); diff != "" {
				t.Errorf("Top() (-want +got):\n%s", diff)
			}

			class, msg := Head(text)
			if class != tt.wantTop.Class {
				t.Errorf("Head class = %q, want %q", class, tt.wantTop.Class)
			}
			if want := strings.Join(strings.Fields(tt.wantTop.Message), " "); msg != want {
				t.Errorf("Head message = %q, want %q", msg, want)
			}
		})
	}
}

// closureFile is the pseudo-file of the queued closure in php84_closure.txt:
// its source, over several lines.
const closureFile = `laravel-serializable-closure://function () use ($ticket) {
            if (! \App\Interop\Outcome::flagIsSet()) {
                throw new \RuntimeException('escalation for ticket '.$ticket.' failed');
            }
            \App\Interop\Outcome::record('Closure', ['ticket' => $ticket]);
        }`

// TestMultiLineFrame: a frame that names a queued closure holds its source
// over several lines, and the frame is kept whole, up to the next frame.
func TestMultiLineFrame(t *testing.T) {
	frames := Parse(readFixture(t, "php84_closure.txt")).Top().Frames
	call := `App\Console\Commands\DispatchCommand::{closure:` + closureFile + `:2}()`
	want := Frame{Index: 0, File: "/usr/share/php/Illuminate/Container/BoundMethod.php", Line: 36, Call: call,
		Raw: "/usr/share/php/Illuminate/Container/BoundMethod.php(36): " + call, Vendor: true}
	if diff := cmp.Diff(want, frames[0]); diff != "" {
		t.Errorf("frame #0 (-want +got):\n%s", diff)
	}
	if f := frames[1]; f.Index != 1 || f.Call != `Illuminate\Container\BoundMethod::{closure:Illuminate\Container\BoundMethod::call():35}()` || f.Line != 43 {
		t.Errorf("frame #1 = %+v", f)
	}
	// Blank lines inside the source belong to the frame; those after the
	// last frame do not.
	got := Parse("E: m in f.php:1\nStack trace:\n#0 closure://function () {\n\n  x();\n}(3): x()\n#1 {main}\n\n").Top().Frames
	if len(got) != 2 || got[0].Raw != "closure://function () {\n\n  x();\n}(3): x()" || got[0].Line != 3 || got[1].Raw != "{main}" {
		t.Errorf("frames = %+v", got)
	}
}

func TestFrames(t *testing.T) {
	chain := Parse(readFixture(t, "internal_frame.txt"))
	want := []Frame{
		{Index: 0, File: "[internal function]", Call: "{closure}()", Raw: "[internal function]: {closure}()", Vendor: true},
		{Index: 1, File: genFile, Line: 196, Call: "array_map()", Raw: genFile + "(196): array_map()"},
		{Index: 2, File: genFile, Line: 130, Call: "{closure}()", Raw: genFile + "(130): {closure}()"},
		{Index: 3, File: genFile, Line: 195, Call: "{closure}()", Raw: genFile + "(195): {closure}()"},
		{Index: 4, Call: "{main}", Raw: "{main}", Vendor: true},
	}
	if diff := cmp.Diff(want, chain.Top().Frames); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}

	q := Parse(readFixture(t, "query_exception.txt")).Top()
	first := q.Frames[0]
	if first.File != "/usr/share/php/Illuminate/Database/Connection.php" || first.Line != 672 || !first.Vendor ||
		first.Call != `Illuminate\Database\Connection->runQueryCallback()` {
		t.Errorf("first QueryException frame = %+v", first)
	}
	// The first frame that is not vendor code is where to look for the bug.
	app := -1
	for i, f := range q.Frames {
		if !f.Vendor {
			app = i
			break
		}
	}
	if app < 0 || q.Frames[app].Index != 7 || q.Frames[app].Call != `Illuminate\Database\Query\Builder->first()` {
		t.Errorf("first application frame: %d of %+v", app, q.Frames)
	}
}

func TestFrameEdgeCases(t *testing.T) {
	tests := []struct {
		raw  string
		want Frame
	}{
		{"/var/www/vendor/laravel/framework/src/Illuminate/Queue/Worker.php(425): Illuminate\\Queue\\Jobs\\Job->fire()",
			Frame{File: "/var/www/vendor/laravel/framework/src/Illuminate/Queue/Worker.php", Line: 425, Call: `Illuminate\Queue\Jobs\Job->fire()`, Vendor: true}},
		{"/app/x(1).php(12): foo('a): b')",
			Frame{File: "/app/x(1).php", Line: 12, Call: "foo('a): b')"}},
		{"/app/a.php(3) : eval()'d code(7): bar()",
			Frame{File: "/app/a.php(3) : eval()'d code", Line: 7, Call: "bar()"}},
		{`C:\inetpub\vendor\x.php(9): y()`, Frame{File: `C:\inetpub\vendor\x.php`, Line: 9, Call: "y()", Vendor: true}},
		{"garbage without location", Frame{Call: "garbage without location"}},
	}
	for _, tt := range tests {
		got := parseFrame(0, tt.raw)
		tt.want.Raw = tt.raw
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseFrame(%q) (-want +got):\n%s", tt.raw, diff)
		}
	}
}

func TestTopBlock(t *testing.T) {
	text := readFixture(t, "three_chain.txt")
	block := TopBlock(text)
	if !strings.HasPrefix(block, "RuntimeException: level three\nwith a second line in ") {
		t.Errorf("TopBlock starts %q", block[:40])
	}
	if strings.Contains(block, "Next ") {
		t.Errorf("TopBlock still contains an earlier block: %q", block)
	}
	single := readFixture(t, "max_attempts.txt")
	if got := TopBlock(single); got != single {
		t.Errorf("TopBlock of a single exception changed the text")
	}
}

func TestMessageContainingNextMarker(t *testing.T) {
	text := "RuntimeException: first\n\nNext thing: not a chain in /app/a.php:3\nStack trace:\n#0 {main}"
	chain := Parse(text)
	if len(chain) != 1 {
		t.Fatalf("got %d blocks, want 1: %+v", len(chain), chain)
	}
	if chain[0].Message != "first\n\nNext thing: not a chain" {
		t.Errorf("message = %q", chain[0].Message)
	}
	if TopBlock(text) != text {
		t.Errorf("TopBlock split inside a message")
	}
}

func TestHeadOnTruncatedText(t *testing.T) {
	full := readFixture(t, "query_exception.txt")
	tests := []struct {
		name      string
		text      string
		wantClass string
		wantMsg   string
	}{
		{"cut inside the first trace", full[:300], "PDOException", "SQLSTATE[HY000]: General error: 1 no such table: orders"},
		{"cut inside the location", "RuntimeException: Order 7 missing in /var/ww", "RuntimeException", "Order 7 missing in /var/ww"},
		{"cut inside the message", "RuntimeException: Order 7 mis", "RuntimeException", "Order 7 mis"},
		{"class only", `App\Exceptions\Boom`, `App\Exceptions\Boom`, ""},
		{"empty", "", "", ""},
		{"not php at all", "worker killed by OOM", "", "worker killed by OOM"},
		{"multi-line head", "LogicException: a\nb\n\nc in /x.php:1", "LogicException", "a b c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, msg := Head(tt.text)
			if class != tt.wantClass || msg != tt.wantMsg {
				t.Errorf("Head = (%q, %q), want (%q, %q)", class, msg, tt.wantClass, tt.wantMsg)
			}
		})
	}
}

func TestHostileHeaders(t *testing.T) {
	tests := []struct {
		header string
		want   Exception
	}{
		{"Foo: bar in :12", Exception{Class: "Foo", Message: "bar in :12"}},
		{"Foo: bar in /a.php:-1", Exception{Class: "Foo", Message: "bar in /a.php:-1"}},
		{": no class in /a.php:1", Exception{Message: ": no class", File: "/a.php", Line: 1}},
		{`Trailing\: x`, Exception{Message: `Trailing\: x`}},
		{"Foo: line in /a.php:99999999999999999999", Exception{Class: "Foo", Message: "line in /a.php:99999999999999999999"}},
	}
	for _, tt := range tests {
		got := parseHeader(tt.header)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseHeader(%q) (-want +got):\n%s", tt.header, diff)
		}
	}
}

func TestParseEmpty(t *testing.T) {
	if c := Parse("  \n"); len(c) != 0 {
		t.Errorf("Parse(blank) = %+v", c)
	}
	if top := Chain(nil).Top(); top.Class != "" || top.Frames != nil {
		t.Errorf("empty Top = %+v", top)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"chained.txt", "multiline.txt", "internal_frame.txt", "php84_closure.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("#0 {main}\n\nNext ")
	f.Fuzz(func(t *testing.T, text string) {
		chain := Parse(text)
		class, _ := Head(text)
		if len(chain) > 0 && class != chain.Top().Class {
			t.Errorf("Head class %q disagrees with Parse top %q", class, chain.Top().Class)
		}
		if tb := TopBlock(text); !strings.HasSuffix(text, tb) {
			t.Errorf("TopBlock is not a suffix of the text")
		}
	})
}
