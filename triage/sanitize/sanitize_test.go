package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

func TestLine(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain ascii untouched", `App\Jobs\ProcessPodcast failed`, `App\Jobs\ProcessPodcast failed`},
		{"unicode letters kept", "Замовлення 1042 не знайдено — ünïcode", "Замовлення 1042 не знайдено — ünïcode"},
		{"newline marked", "line one\nline two", "line one⏎line two"},
		{"crlf is one break", "a\r\nb", "a⏎b"},
		{"tab becomes space", "a\tb", "a b"},
		{"lone CR overwrite trick", "Job OK\rJob FAILED", `Job OK\x0dJob FAILED`},
		{"OSC 52 clipboard write", "\x1b]52;c;cm0gLXJmIH4=\x07", `\x1b]52;c;cm0gLXJmIH4=\x07`},
		{"OSC title set with ST", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
		{"CSI cursor up and clear line", "ok\x1b[1A\x1b[2Khidden", `ok\x1b[1A\x1b[2Khidden`},
		{"SGR colour", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"8-bit CSI (C1)", "a\u009b2Jb", `a\u009b2Jb`},
		{"8-bit OSC (C1)", "\u009d0;title\u009c", `\u009d0;title\u009c`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"NUL and BEL", "a\x00b\x07", `a\x00b\x07`},
		{"backspace overwrite", "secret\x08\x08\x08\x08\x08\x08public", `secret\x08\x08\x08\x08\x08\x08public`},
		{"bidi override", "App\\Jobs\\\u202eredrO", `App\Jobs\\u202eredrO`},
		{"bidi isolate", "x\u2066y\u2069", `x\u2066y\u2069`},
		{"zero width space and joiner", "a\u200bb\u200dc\ufeff", `a\u200bb\u200dc\ufeff`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"tag characters", "a\U000E0041b", `a\ue0041b`},
		{"invalid utf-8", "a\xffb\xc3", "a\ufffdb\ufffd"},
		{"emoji kept", "deploy 🚀 done", "deploy 🚀 done"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Line(tt.in)
			if got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
			assertInert(t, got)
			if strings.ContainsAny(got, "\n\t") {
				t.Errorf("Line(%q) kept a newline or tab: %q", tt.in, got)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keeps newlines and tabs", "Stack trace:\n#0\t{main}", "Stack trace:\n#0\t{main}"},
		{"crlf becomes lf", "a\r\nb\r\n", "a\nb\n"},
		{"escapes still escaped", "msg\x1b]52;c;AAAA\x07\nnext", "msg\\x1b]52;c;AAAA\\x07\nnext"},
		{"lone CR escaped", "100%\rpwned", `100%\x0dpwned`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Text(tt.in); got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"  first\nsecond ": "first …", "one": "one", "a \r\nb": "a …", "\nlead\n": "lead"} {
		if got := FirstLine(in); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		width int
		want  string
	}{
		{"fits", "hello", 5, "hello"},
		{"cut with ellipsis", "hello world", 8, "hello w…"},
		{"zero width", "hello", 0, ""},
		{"negative width", "hello", -3, ""},
		{"wide characters", "日本語テキスト", 7, "日本語…"},
		{"escapes count as visible text", "\x1b[31mred", 6, `\x1b[…`},
		{"newline made visible before cutting", "a\nb", 3, "a⏎b"},
		{"width one", "hello", 1, "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.in, tt.width)
			if got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.width, got, tt.want)
			}
			if w := ansi.StringWidth(got); tt.width > 0 && w > tt.width {
				t.Errorf("Truncate(%q, %d) is %d cells wide", tt.in, tt.width, w)
			}
			assertInert(t, got)
		})
	}
}

func TestLineIsIdempotent(t *testing.T) {
	in := "a\x1b[2J\u202eb\nc\xff"
	once := Line(in)
	if twice := Line(once); twice != once {
		t.Errorf("Line(Line(x)) = %q, want %q", twice, once)
	}
}

func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "\x1b]52;c;AAAA\x07", "a\r\nb", "\u202e", "\xff\xfe", "日本\t語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		assertInert(t, Line(s))
		assertInert(t, Text(s))
		if got := Truncate(s, 10); ansi.StringWidth(got) > 10 {
			t.Errorf("Truncate(%q, 10) = %q is too wide", s, got)
		}
	})
}

// assertInert fails when s still contains anything a terminal would act on.
func assertInert(t *testing.T, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("output is not valid UTF-8: %q", s)
	}
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || dangerous(r) {
			t.Errorf("output %q still contains %U", s, r)
		}
	}
}
