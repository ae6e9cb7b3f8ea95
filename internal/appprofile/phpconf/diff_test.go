package phpconf

import (
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// diffEnv is the environment both PHP and EvalConfig see in
// TestDifferentialAgainstPHP.
func diffEnv() map[string]string {
	return map[string]string{
		"T": "true", "TP": "(TRUE)", "F": "False", "FP": "(false)", "E": "empty", "EP": "(Empty)",
		"N": "null", "NP": "(null)", "DQ": `"quoted value"`, "SQ": `'single'`, "HALF": `"half'`,
		"PLAIN": "plain", "EMPTY": "", "NUM": "42", "ZERO": "0", "FLOAT": "1.5e3", "NEG": "-7",
		"NAME": "My Fancy App @ Home", "UNI": "Ünïcødé straße", "SP": " 12 ", "KEY": "PLAIN",
	}
}

// exprGen makes random expressions from the subset EvalConfig evaluates.
type exprGen struct{ r *rand.Rand }

func (g exprGen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g exprGen) leaf() string {
	switch g.r.Intn(6) {
	case 5:
		return g.pick(`"\u{1F600}\u{41}"`, `"\xZZ\x4"`, `"\400\0\08"`, `'\\\''`, `"\\\""`, `"a $ b"`, `"\$x"`, `"x{ y"`, `"\{$"`,
			`'a\nb'`, `"\v\f\e\r"`, `"é"`, `1e400`, `-1e400`, `0.1e-400`, `00`, `0_1`, `0X1f`, `0B1`, `1E5`, `"\u{0}"`, `"$"`)
	case 0:
		return g.pick("0", "1", "-1", "42", "9223372036854775807", "0x1F", "017", "0b11", "1_000", "PHP_INT_MIN", "PHP_INT_MAX")
	case 1:
		return g.pick("0.0", "-0.0", "1.5", "0.1", "1e3", "1.0E+25", "1e-7", ".5", "NAN", "INF", "123456789012345.678")
	case 2:
		return g.pick(`''`, `'0'`, `'0.0'`, `'abc'`, `'12abc'`, `' 7 '`, `'1e3'`, `'-1.9'`, `"a\tb"`, `"\x41\u{263A}"`, `'it\'s'`, `"nul\0"`, `'Foo Bar@Baz'`, `'ÄÖÜ straße'`, `'/a/b/c/'`, `'x/y'`, `'..'`)
	case 3:
		return g.pick("true", "false", "null", "TRUE", "Null", "[]", "['a' => 1]", "[1, 2]", "App\\Jobs\\X::class", "\\Foo::class")
	}
	keys := make([]string, 0, len(diffEnv())+1)
	for k := range diffEnv() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "env('" + g.pick(append(keys, "MISSING")...) + "')"
}

func (g exprGen) key() string {
	for {
		if k := g.leaf(); !strings.HasPrefix(k, "[") {
			return k
		}
	}
}

func (g exprGen) expr(depth int) string {
	if depth <= 0 || g.r.Intn(4) == 0 {
		return g.leaf()
	}
	d := depth - 1
	switch g.r.Intn(16) {
	case 14, 15:
		return "(" + g.expr(d) + " " + g.pick("+", "-", "*", "/", "%", "**", "&&", "||", "===", "!==", "and", "or") + " " + g.expr(d) + ")"
	case 0:
		return g.expr(d) + " . " + g.expr(d)
	case 1:
		return "(" + g.expr(d) + " ? " + g.expr(d) + " : " + g.expr(d) + ")"
	case 2:
		return "(" + g.expr(d) + " ?: " + g.expr(d) + ")"
	case 3:
		return "(" + g.expr(d) + " ?? " + g.expr(d) + ")"
	case 4:
		return "(" + g.pick("int", "integer", "bool", "boolean", "float", "double", "string") + ") " + g.expr(d)
	case 5:
		return "!" + g.expr(d)
	case 6:
		return "-(" + g.expr(d) + ")"
	case 7:
		return "env('" + g.pick("PLAIN", "MISSING", "NUM", "N", "EMPTY") + "', " + g.expr(d) + ")"
	case 8:
		return "Str::slug(" + g.expr(d) + ", " + g.pick("'-'", "'_'", "'.'", "''", "'__'") + ")"
	case 9:
		return "dirname(" + g.expr(d) + ")"
	case 10:
		return g.pick("base_path", "storage_path", "database_path", "app_path", "config_path", "resource_path", "public_path") + "(" + g.expr(d) + ")"
	case 11:
		// Keys are scalar leaves: PHP rejects an array key at compile time.
		return "[" + g.key() + " => " + g.expr(d) + ", " + g.expr(d) + "]"
	case 12:
		return "[" + g.expr(d) + ", 'k' => " + g.expr(d) + "]"
	}
	return "(" + g.expr(d) + ")"
}

// TestDifferentialAgainstPHP evaluates random expressions with PHP (and
// Laravel's own env() and Str::slug) and with EvalConfig, and compares
// every result EvalConfig claims to know. It needs php with Laravel on the
// include path, as testdata/laravel-app's install-deps.sh sets up.
func TestDifferentialAgainstPHP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs php")
	}
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php not installed")
	}
	if exec.Command("php", "-r", "require 'Illuminate/autoload.php';").Run() != nil {
		t.Skip("Laravel is not on php's include path")
	}
	const count = 3000
	seed := int64(1)
	if s := os.Getenv("PHPCONF_DIFF_SEED"); s != "" { // for longer runs by hand
		fmt.Sscan(s, &seed)
	}
	g := exprGen{rand.New(rand.NewSource(seed))}
	exprs := make([]string, count)
	for i := range exprs {
		exprs[i] = g.expr(4)
	}
	// PHP side: each expression in a try block; a thrown error is recorded
	// as the string ERROR. Warnings and deprecations only go to stderr, as
	// while Laravel loads config files (before its error handler exists).
	var php strings.Builder
	php.WriteString("<?php\nrequire 'Illuminate/autoload.php';\nuse Illuminate\\Support\\Str;\n")
	php.WriteString("ini_set('display_errors', 'stderr');\nerror_reporting(0);\n")
	php.WriteString("$app = new Illuminate\\Foundation\\Application('/srv/app');\n")
	for k, v := range diffEnv() {
		fmt.Fprintf(&php, "putenv(%s);\n", phpQuote(k+"="+v))
	}
	php.WriteString("$out = [];\n")
	for i, e := range exprs {
		fmt.Fprintf(&php, "try { $out[%d] = [%s]; } catch (\\Throwable $e) { $out[%d] = 'ERROR'; }\n", i, e, i)
	}
	php.WriteString("echo '<?php return ', var_export($out, true), ';';\n")
	dir := t.TempDir()
	script := filepath.Join(dir, "diff.php")
	if err := os.WriteFile(script, []byte(php.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("php", script)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v\n%.2000s%.2000s", err, res, stderr.String())
	}
	want, err := parseCache("php", res)
	if err != nil {
		os.WriteFile(filepath.Join(os.TempDir(), "phpconf-diff-out.php"), res, 0o600)
		t.Fatalf("parse php output: %v (kept in %s)", err, filepath.Join(os.TempDir(), "phpconf-diff-out.php"))
	}
	// Go side: one config file returning every expression.
	var cfg strings.Builder
	cfg.WriteString("<?php\nuse Illuminate\\Support\\Str;\nreturn [\n")
	for i, e := range exprs {
		fmt.Fprintf(&cfg, "%d => [%s],\n", i, e)
	}
	cfg.WriteString("];\n")
	got, err := EvalConfig("config/diff.php", []byte(cfg.String()), EvalContext{Root: "/srv/app", Env: envMap(diffEnv())})
	if err != nil {
		t.Fatal(err)
	}
	var st diffStats
	for i, e := range exprs {
		key := fmt.Sprint(i)
		g, w := got.entry(key).entry("0"), want.entry(key)
		if w.Kind == KindString && w.Str == "ERROR" {
			// PHP threw or warned. EvalConfig must not claim to know the
			// value, unless it skipped the failing part the way env()
			// skips its default when the variable is set (PHP evaluates
			// the argument first).
			// Likewise the truth value or count of an array literal does not
			// depend on elements that throw.
			if !containsUnknown(g) && !strings.Contains(e, "env(") && !strings.Contains(e, "[") {
				t.Errorf("%s: PHP fails, EvalConfig gives %s", e, describe(g))
			}
			st.phpErrors++
			continue
		}
		if !st.compare(g, w.entry("0")) {
			t.Errorf("%s:\n  EvalConfig %s\n  PHP        %s", e, describe(g), describe(w.entry("0")))
		}
	}
	t.Logf("%d expressions (%d fail in PHP): %d values compared, %d unknown to EvalConfig", count, st.phpErrors, st.compared, st.unknown)
	if st.compared < count/2 {
		t.Errorf("only %d values were compared", st.compared)
	}
}

type diffStats struct{ compared, unknown, phpErrors int }

// compare reports whether EvalConfig's value g agrees with PHP's w
// wherever g is known.
func (st *diffStats) compare(g, w *Value) bool {
	if g == nil || w == nil {
		return false
	}
	if g.Kind == KindUnknown {
		st.unknown++
		return true
	}
	if g.Kind != KindArray {
		st.compared++
		return sameValue(g, w)
	}
	if w.Kind != KindArray {
		return false
	}
	unknownKeys := false
	for _, e := range g.Entries {
		if e.KeyUnknown {
			unknownKeys = true
			st.unknown++
			continue
		}
		if !st.compare(e.Value, w.entry(e.Key)) {
			return false
		}
	}
	return unknownKeys || len(g.Entries) == len(w.Entries)
}

func containsUnknown(v *Value) bool {
	if v.Kind == KindUnknown {
		return true
	}
	for _, e := range v.Entries {
		if e.KeyUnknown || containsUnknown(e.Value) {
			return true
		}
	}
	return false
}

// phpQuote writes s as a single-quoted PHP string.
func phpQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// sameValue compares two values the way === would, with NAN equal to
// itself and -0.0 distinct from 0.0 (var_export shows the sign).
func sameValue(a, b *Value) bool {
	if a == nil || b == nil || a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case KindArray:
		if len(a.Entries) != len(b.Entries) {
			return false
		}
		for i := range a.Entries {
			if a.Entries[i].Key != b.Entries[i].Key || a.Entries[i].KeyUnknown || !sameValue(a.Entries[i].Value, b.Entries[i].Value) {
				return false
			}
		}
		return true
	case KindFloat:
		if math.IsNaN(a.Float) || math.IsNaN(b.Float) {
			return math.IsNaN(a.Float) && math.IsNaN(b.Float)
		}
		return a.Float == b.Float && math.Signbit(a.Float) == math.Signbit(b.Float)
	}
	return a.Bool == b.Bool && a.Int == b.Int && a.Str == b.Str
}
