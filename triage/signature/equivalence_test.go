package signature

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// seeds are inputs aimed at the edges of each expression.
var seeds = []string{
	"", "a", "0", "<n>, <n>", "1,2 , 3", "x <n>,<n> y",
	`SQLSTATE[23000]: Duplicate entry 'x' for key 'y'`,
	"cURL error 28: https://a.b/c?d=1", "\x00SQLSTATE[HY000]\x00",
	"'SQLSTATE[23000]' then SQLSTATE[HY000]", "see http://xSQLSTATE[42S02] SQLSTATE[08006]",
	"x.http://foo", "aſ://x", "\u212a://x", "1http://x", "_a://b", "http:// x", "a+b.c-d://e/f",
	"a.b@x.com", "a@b.co-uk", "a@b.com_x", "a@b.coK", "a@b.c\u212ax", "-a@x.com", "é.x@y.com",
	"a@b.com.x@c.com", "x@1.2.3.ab", "a@b..com", "a@b.c", "ſ@ſ.ſſ",
	"9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d", "x9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d",
	"9B1DEB4D-3B7D-4BAD-9BDD-2B0D7B3DCB6Dx", "2024-03-01 12:30:00", "2024-03-01T12:00:00.123+00:00",
	"2024-03-01T12:00:00+0000", "2024-03-01T12:00:00+00:0", "2024-03-01T12:00:00Zulu", "12024-03-01 12:30:00",
	"1.2.3.4", "1.2.3.4.5.6.7.8", "1234.1.1.1", "1.2.3.4567", "10.0.3.17:6379", "a1.2.3.4",
	"/a/b", "x /a/b", "/a/b//c/d", "/a/b,/c/d", "//a/b", "(/var/www/x.php:42)", "a/b/c", "=/a/b/",
	`C:\a b\c d`, `C:\foo\ bar`, `xC:\a`, `C:\a\`, `C:\ \a`, `D:\x\y z\`,
	"[1, 2]", "['a', \"b\", -1.5, true, false, null]", "[1.2.3.4, 5]", "[trueish]", "[1,]", "[ ]", "[[1]]",
	`'a\'b'`, `it\'s 'x'`, "'a\\\nb'", `'\'`, `"a \"b\" c"`, `"App\Foo"`, `"\App\Foo"`, `"<url>"`,
	`"http://x"`, `"jobs.queue"`, `""`, `"a.b.c"`, `"a..b"`, `"\\a"`,
	"0x1F", "0x", "0x0x12", "a0x12", "0x12g", "deadbeef1", "deadbeef", "12345678", "abc-12345678ab-def",
	"sk_live_51HZx9A2eZvKYlo2C0abcdEFgh", "aaaaaaaaaaaaaaaaaaaa11==", "aaaaaaaaaaaaaaaaaaa1=",
	"abcdef0123456789abcdef-xyzxyzxyzxyzxyzxyzxyz12", "1.5x", "1e5x", "1.2e", "1.2.3", "1e+5", "v2 2v _1",
	"1, 2,3 ,4", "<n>,<n>,<n>", "<<n>, <n>", "a\v b\u00a0", "\u00a0 x \u2028",
	"é1", "\xff1\xfe", "\xc5", "'\xe2'", "\\\xc5\xbf'",
	"{closure:A\\B::c():35}()", "{closure:{closure:A::b():3}:4}", "{closure:/a/b.php:7}", "{closure:a b:1}",
	"{closure::1}", "{closure:1}", "{closure:a:}", "{closure:a:1", "{closure:{closure}:1}", "{closure:x:1{closure}",
	"{closure:laravel-serializable-closure://function () { $a = 1; }:2}()", "{closure:closure://f(){\n}:3}",
	"{closure:closure://}:x} }:12}", "{closure:laravel-serializable-closure://no end", "{closure:{closure:closure://{}:2}:3}",
	"{closure:SQLSTATE[23000]:1} SQLSTATE[HY000]", "x{closure:a:1}{closure:b:2}y", "{closure:\x00:1}",
}

// hostile are long inputs that would make a careless scanner quadratic.
func hostile() []string {
	return []string{
		strings.Repeat("['[', ", 400), strings.Repeat("[1, ", 600), strings.Repeat(`'\'`, 800),
		strings.Repeat("a.", 1000) + "@", "a@" + strings.Repeat("a.", 1000), strings.Repeat("a://", 600),
		strings.Repeat("C:\\ a ", 400), strings.Repeat("1.", 1000), strings.Repeat("deadbeef12-", 200),
		strings.Repeat(" \t", 1000), strings.Repeat("<n>, ", 500), strings.Repeat("SQLSTATE[", 300),
		strings.Repeat("SQLSTATE[00000]'", 200), strings.Repeat("é", 1500) + "1",
		strings.Repeat("{closure:", 220) + "a:1" + strings.Repeat("}:1", 220), strings.Repeat("{closure:closure://", 100),
		strings.Repeat("{closure:a", 200) + "}",
	}
}

func FuzzNormalizeEquivalence(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Normalize(s), normalizeReference(s); got != want {
			t.Fatalf("Normalize(%q)\n got %q\nwant %q", s, got, want)
		}
	})
}

// FuzzPasses compares each hand-written pass with the expression it
// stands for, which localises a difference FuzzNormalizeEquivalence finds.
func FuzzPasses(f *testing.F) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		quoted := func(q string) func(dst, src []byte) ([]byte, bool) {
			return func(dst, src []byte) ([]byte, bool) { return replaceQuoted(dst, src, q) }
		}
		passes := []func(dst, src []byte) ([]byte, bool){}
		for k := passURL; k <= passList; k++ {
			passes = append(passes, func(dst, src []byte) ([]byte, bool) { return runPass(dst, src, k) })
		}
		passes = append(passes, quoted("'"), quoted(`"`),
			func(dst, src []byte) ([]byte, bool) { return runPass(dst, src, passHexLiteral) })
		if got, _ := replaceClosureNames(nil, []byte(s)); string(got) != refClosureNames(s) {
			t.Fatalf("closure names on %q\n got %q\nwant %q", s, got, refClosureNames(s))
		}
		for i, p := range passes {
			got, _ := p(nil, []byte(s))
			if want := referenceSteps[i].run(s); string(got) != want {
				t.Fatalf("pass %d on %q\n got %q\nwant %q", i, s, got, want)
			}
		}
		got, _ := replaceHexIDsAndTokens(nil, []byte(s))
		if want := referenceSteps[12].run(referenceSteps[11].run(s)); string(got) != want {
			t.Fatalf("hex ids and tokens on %q\n got %q\nwant %q", s, got, want)
		}
		want := referenceSteps[15].run(referenceSteps[14].run(referenceSteps[13].run(s)))
		if got := finishNumbersAndSpace(nil, []byte(s)); string(got) != want {
			t.Fatalf("numbers and spaces on %q\n got %q\nwant %q", s, got, want)
		}
	})
}

func TestSeedsMatchReference(t *testing.T) {
	for _, s := range append(hostile(), seeds...) {
		if got, want := Normalize(s), normalizeReference(s); got != want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", s, got, want)
		}
	}
}

func TestByteClass(t *testing.T) {
	for i := 0; i < 256; i++ {
		c := byte(i)
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit := c >= '0' && c <= '9'
		word := alpha || digit || c == '_'
		space := strings.IndexByte("\t\n\f\r ", c) >= 0
		want := map[byte]bool{
			cWord:    word,
			cDigit:   digit,
			cHex:     digit || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F',
			cToken:   word || c == '+' || c == '/' || c == '-',
			cSpace:   space,
			cPathSeg: word || strings.IndexByte(".@+~-", c) >= 0,
			cURLStop: space || strings.IndexByte("'\"`<>()[]{}", c) >= 0,
			cAlpha:   alpha,
		}
		for class, w := range want {
			if is(c, class) != w {
				t.Errorf("byte %#x class %#x: got %v", c, class, !w)
			}
		}
	}
}

// The fold runes are really in the reference's (?i) classes; if Go's
// regexp stopped folding them, the scanner would be wrong, not the test.
func TestFoldRunesMatchCaseInsensitiveLetters(t *testing.T) {
	for _, r := range []rune{'ſ', 'K'} {
		in := "a" + string(r) + "://x"
		if got := normalizeReference(in); got != "<url>" {
			t.Errorf("reference on %q = %q", in, got)
		}
		if got := Normalize(in); got != "<url>" {
			t.Errorf("Normalize(%q) = %q", in, got)
		}
	}
	if !utf8.ValidString("ſK") {
		t.Fatal("bad literal")
	}
}
