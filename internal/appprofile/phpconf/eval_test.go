package phpconf

import (
	"errors"
	"strings"
	"testing"
)

func envMap(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// evalOne evaluates "<?php return ['v' => EXPR];" and returns v.
func evalOne(t *testing.T, expr string, env map[string]string) *Value {
	t.Helper()
	src := "<?php\nreturn [\n'v' => " + expr + ",\n'after' => 'ok',\n];\n"
	v, err := EvalConfig("config/x.php", []byte(src), EvalContext{Root: "/srv/app", Env: envMap(env)})
	if err != nil {
		t.Fatalf("EvalConfig(%s): %v", expr, err)
	}
	if a := v.Get("after"); a == nil || a.Str != "ok" {
		t.Errorf("%s: the entry after it was lost: %+v", expr, v.Entries)
	}
	return v.Get("v")
}

func describe(v *Value) string {
	if v == nil {
		return "<nil>"
	}
	switch v.Kind {
	case KindUnknown:
		return "unknown:" + v.Expr
	case KindArray:
		var parts []string
		for _, e := range v.Entries {
			k := e.Key
			if e.KeyUnknown {
				k = "?" + k
			}
			parts = append(parts, k+"="+describe(e.Value))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case KindFloat:
		s, _ := v.String()
		return "float:" + s
	}
	s, _ := v.String()
	return [...]string{KindNull: "null", KindBool: "bool", KindInt: "int", KindString: "string"}[v.Kind] + ":" + s
}

func TestEvalExpressions(t *testing.T) {
	env := map[string]string{
		"T1": "true", "T2": "(TRUE)", "F1": "False", "F2": "(false)", "E1": "empty", "E2": "(Empty)",
		"N1": "null", "N2": "(null)", "Q1": `"quoted"`, "Q2": `'single'`, "Q3": `"half'`, "Q4": `"`,
		"Q5": "\"multi\nline\"", "Q6": `""`, "PLAIN": "plain", "EMPTY": "", "NUM": "42", "ZERO": "0",
		"NAME": "My App", "KEY": "PLAIN",
	}
	for _, c := range []struct{ expr, want string }{
		// literals
		{`'single \' \\ \n'`, `string:single ' \ \n`},
		{`"dq \t \x41\101 \u{263A} \$x \{ \e \q \7"`, "string:dq \t AA ☺ $x \\{ \x1b \\q \x07"},
		{`"a\0b"`, "string:a\x00b"},
		{`42`, "int:42"},
		{`-42`, "int:-42"},
		{`0x1F`, "int:31"},
		{`0b101`, "int:5"},
		{`0o17`, "int:15"},
		{`017`, "int:15"},
		{`1_000`, "int:1000"},
		{`9223372036854775807`, "int:9223372036854775807"},
		{`9223372036854775808`, "float:9.2233720368548E+18"},
		{`1.5`, "float:1.5"},
		{`-PHP_INT_MIN`, "float:9.2233720368548E+18"},
		{`-9223372036854775808`, "float:-9.2233720368548E+18"},
		{`- -5`, "int:5"},
		{`+'5'`, "unknown:+'5'"},
		{`+1.5`, "float:1.5"},
		{`0xFFFFFFFFFFFFFFFF`, "float:1.844674407371E+19"},
		{`0x1FFFFFFFFFFFFFFFF`, "float:3.6893488147419E+19"},
		{`99999999999999999999`, "float:1.0E+20"},
		{`0777777777777777777777777`, "float:4.7223664828696E+21"},
		{`.5`, "float:0.5"},
		{`1e3`, "float:1000"},
		{`1.0E+25`, "float:1.0E+25"},
		{`-0.0`, "float:-0"},
		{`NAN`, "float:NAN"},
		{`-INF`, "float:-INF"},
		{`PHP_INT_MIN`, "int:-9223372036854775808"},
		{`true`, "bool:1"},
		{`FALSE`, "bool:"},
		{`Null`, "null:"},
		{`PHP_EOL`, "string:\n"},
		{`\DIRECTORY_SEPARATOR`, "string:/"},
		{`__LINE__`, "int:3"},
		// arrays
		{`['a', 'b', 5 => 'c', 'd', '7' => 'e', '08' => 'f', true => 'g', null => 'h', false => 'i', 1.9 => 'j']`,
			"[0=string:i 1=string:j 5=string:c 6=string:d 7=string:e 08=string:f =string:h]"},
		{`array(-5 => 'x', 'y')`, "[-5=string:x -4=string:y]"},
		{`['k' => 1, 'o' => 0, 'k' => 2]`, "[k=int:2 o=int:0]"},
		{`[PHP_INT_MAX => 1, 2]`, "[9223372036854775807=int:1 ?[]=int:2]"},
		{`[[[]]]`, "[0=[0=[]]]"},
		{`[...$other, 'k' => 1]`, "[?...$other=unknown:$other k=int:1]"},
		// concatenation and operators
		{`'a' . 1 . true . null . 1.5 . -3 . false`, "string:a111.5-3"},
		{`'x' . 0.1 + 0.2`, "string:x0.3"}, // + binds tighter than . in PHP 8
		// arithmetic (checked with PHP 8.2)
		{`60 * 24`, "int:1440"},
		{`'12abc' * 1`, "int:12"},
		{`' 5 ' * 2`, "int:10"},
		{`'1e3' + 0`, "float:1000"},
		{`null + 1`, "int:1"},
		{`true * 3`, "int:3"},
		{`7 / 2`, "float:3.5"},
		{`6 / 3`, "int:2"},
		{`7 % -3`, "int:1"},
		{`-7 % 3`, "int:-1"},
		{`1.5 % 1`, "int:0"},
		{`PHP_INT_MIN % -1`, "int:0"},
		{`PHP_INT_MAX + 1`, "float:9.2233720368548E+18"},
		{`PHP_INT_MIN - 1`, "float:-9.2233720368548E+18"},
		{`PHP_INT_MAX * 2`, "float:1.844674407371E+19"},
		{`PHP_INT_MIN * 1`, "int:-9223372036854775808"},
		{`PHP_INT_MIN / -1`, "float:9.2233720368548E+18"},
		{`-PHP_INT_MAX - 2`, "float:-9.2233720368548E+18"},
		{`'5' + '5'`, "int:10"},
		{`'1.0' + 1`, "float:2"},
		{`0.1 + 0.2`, "float:0.3"},
		{`'0x1A' + 0`, "int:0"},
		{`2 ** 10`, "int:1024"},
		{`(-2) ** 3`, "int:-8"},
		{`0 ** 0`, "int:1"},
		{`2 ** 63`, "unknown:2 ** 63"},
		{`2 ** -1`, "unknown:2 ** -1"},
		{`2.0 ** 2`, "unknown:2.0 ** 2"},
		{`5 / 0`, "unknown:5 / 0"},
		{`5 % 0`, "unknown:5 % 0"},
		{`'abc' * 1`, "unknown:'abc' * 1"},
		{`'' + 1`, "unknown:'' + 1"},
		{`[1] + [5 => 2, 0 => 3]`, "[0=int:1 5=int:2]"},
		{`[1] - [1]`, "unknown:[1] - [1]"},
		{`1 + 2 * 3`, "int:7"},
		{`(1 + 2) * 3`, "int:9"},
		{`10 - 2 - 3`, "int:5"},
		{`true && 'x'`, "bool:1"},
		{`0 && foo()`, "bool:"},
		{`1 || foo()`, "bool:1"},
		{`0 || ''`, "bool:"},
		{`foo() && 1`, "unknown:foo() && 1"},
		{`env('T1') === true`, "bool:1"},
		{`1 === 1.0`, "bool:"},
		{`'a' !== 'b'`, "bool:1"},
		{`1 == 1`, "unknown:1 == 1"},
		{`!env('T1')`, "bool:"},
		{`!!'0'`, "bool:"},
		{`true ? 'y' : 'n'`, "string:y"},
		{`0 ? 'y' : 'n'`, "string:n"},
		{`'' ?: 'dflt'`, "string:dflt"},
		{`'set' ?: 'dflt'`, "string:set"},
		{`null ?? 'dflt'`, "string:dflt"},
		{`false ?? 'dflt'`, "bool:"},
		{`env('MISSING') ?? env('ALSO') ?? 'third'`, "string:third"},
		{`env('MISSING') ?: 'x' ?: 'y'`, "string:x"},
		{`foo() ? 'a' : 'b'`, "unknown:foo() ? 'a' : 'b'"},
		{`true ? foo() : 'b'`, "unknown:true ? foo() : 'b'"},
		{`false ? foo() : 'b'`, "string:b"},
		{`env('T1') ? $x->y : ($z ?? 'w')`, "unknown:env('T1') ? $x->y : ($z ?? 'w')"},
		{`@env('PLAIN')`, "string:plain"},
		{`('a' . 'b')`, "string:ab"},
		// casts
		{`(int) '12abc'`, "int:12"},
		{`(integer) ' 1e3 '`, "int:1000"},
		{`( int ) 9.9`, "int:9"},
		{`(int) []`, "int:0"},
		{`(float) '2.5x'`, "float:2.5"},
		{`(double) 1`, "float:1"},
		{`(bool) '0'`, "bool:"},
		{`(bool) '0.0'`, "bool:1"},
		{`(boolean) []`, "bool:"},
		{`(string) 1.0`, "string:1"},
		{`(string) 0.1`, "string:0.1"},
		{`(string) true`, "string:1"},
		{`(string) null`, "string:"},
		{`(float) 1e15 . ''`, "string:1.0E+15"},
		{`(string) []`, "unknown:(string) []"},
		{`(array) 'x'`, "unknown:(array) 'x'"},
		{`(object) ['a' => 1]`, "unknown:(object) ['a' => 1]"},
		{`(int) env('NUM', 5)`, "int:42"},
		{`(int) env('MISSING', '7 days')`, "int:7"},
		{`(bool) env('MISSING', 'false')`, "bool:1"},
		// env() and Env::get casting
		{`env('T1')`, "bool:1"}, {`env('T2')`, "bool:1"}, {`env('F1')`, "bool:"}, {`env('F2')`, "bool:"},
		{`env('E1')`, "string:"}, {`env('E2')`, "string:"}, {`env('N1')`, "null:"}, {`env('N2')`, "null:"},
		{`env('Q1')`, "string:quoted"}, {`env('Q2')`, "string:single"}, {`env('Q3')`, `string:"half'`},
		{`env('Q4')`, `string:"`}, {`env('Q5')`, "string:\"multi\nline\""}, {`env('Q6')`, "string:"},
		{`env('PLAIN')`, "string:plain"}, {`env('EMPTY', 'dflt')`, "string:"}, {`env('ZERO')`, "string:0"},
		{`env('MISSING')`, "null:"}, {`env('MISSING', 'dflt')`, "string:dflt"}, {`env('MISSING', 90)`, "int:90"},
		{`env('MISSING', null)`, "null:"}, {`env("PLAIN")`, "string:plain"}, {`\env('PLAIN')`, "string:plain"},
		{`ENV('PLAIN')`, "string:plain"}, {`env(env('KEY'))`, "string:plain"},
		{`env('PLAIN', foo())`, "string:plain"},
		{`env('MISSING', foo())`, "unknown:env('MISSING', foo())"},
		{`env($key)`, "unknown:env($key)"},
		{`env(key: 'PLAIN')`, "unknown:env(key: 'PLAIN')"},
		{`env('A', 'b', 'c')`, "unknown:env('A', 'b', 'c')"},
		{`env()`, "unknown:env()"},
		// ::class, helpers, Str::slug
		{`App\Jobs\Sync::class`, `string:App\Jobs\Sync`},
		{`\Illuminate\Bus\BusServiceProvider::class`, `string:Illuminate\Bus\BusServiceProvider`},
		{`static::class`, "unknown:static::class"},
		{`base_path()`, "string:/srv/app"},
		{`base_path('x/y')`, "string:/srv/app/x/y"},
		{`base_path('0')`, "string:/srv/app0"},
		{`base_path('')`, "string:/srv/app"},
		{`storage_path('logs/laravel.log')`, "string:/srv/app/storage/logs/laravel.log"},
		{`database_path('database.sqlite')`, "string:/srv/app/database/database.sqlite"},
		{`app_path()`, "string:/srv/app/app"},
		{`config_path('queue.php')`, "string:/srv/app/config/queue.php"},
		{`resource_path('views')`, "string:/srv/app/resources/views"},
		{`public_path('//index.php')`, "string:/srv/app/public/index.php"},
		{`__DIR__`, "string:/srv/app/config"},
		{`__FILE__`, "string:/srv/app/config/x.php"},
		{`dirname(__DIR__)`, "string:/srv/app"},
		{`dirname(__DIR__, 2)`, "string:/srv"},
		{`dirname(__DIR__, 10)`, "string:/"},
		{`dirname('file')`, "string:."},
		{`dirname('/a//b//')`, "string:/a"},
		{`dirname(__DIR__) . '/storage'`, "string:/srv/app/storage"},
		{`Str::slug(env('NAME'), '_') . '_database_'`, "string:my_app_database_"},
		{`\Illuminate\Support\Str::slug('Foo@Bar Baz')`, "string:foo-at-bar-baz"},
		{`Str::slug('ÄÖÜ straße', '_', '')`, "string:äöü_straße"},
		{`Str::slug('x', '_', 'de')`, "unknown:Str::slug('x', '_', 'de')"},
		{`Str::upper('x')`, "unknown:Str::upper('x')"},
		// expressions only PHP can evaluate
		{`extension_loaded('pdo_mysql') ? array_filter([PDO::MYSQL_ATTR_SSL_CA => env('MYSQL_ATTR_SSL_CA')]) : []`,
			"unknown:extension_loaded('pdo_mysql') ? array_filter([PDO::MYSQL_ATTR_SSL_CA => env('MYSQL_ATTR_SSL_CA')]) : []"},
		{`Facade::defaultAliases()->merge(['X' => Y::class])->toArray()`, "unknown:Facade::defaultAliases()->merge(['X' => Y::class])->toArray()"},
		{`$var`, "unknown:$var"},
		{`"hello $name"`, `unknown:"hello $name"`},
		{`"x {$a['k']} y"`, `unknown:"x {$a['k']} y"`},
		{"`ls`", "unknown:`ls`"},
		{`new DateTimeZone('UTC')`, "unknown:new DateTimeZone('UTC')"},
		{`function () { return [1, 2]; }`, "unknown:function () { return [1, 2]; }"},
		{`fn ($x) => $x * 2`, "unknown:fn ($x) => $x * 2"},
		{`static fn () => ['a' => 1]`, "unknown:static fn () => ['a' => 1]"},
		{`match (env('PLAIN')) { 'plain' => 1, default => 2 }`, "unknown:match (env('PLAIN')) { 'plain' => 1, default => 2 }"},
		{`SOME_CONSTANT`, "unknown:SOME_CONSTANT"},
		{`PDO::ATTR_TIMEOUT`, "unknown:PDO::ATTR_TIMEOUT"},
		{`'abc'[0]`, "unknown:'abc'[0]"},
		{`['a' => 1]['a']`, "unknown:['a' => 1]['a']"},
		{`$a = 5`, "unknown:$a = 5"},
		{`isset($x['y']) ? 1 : 2`, "unknown:isset($x['y']) ? 1 : 2"},
		{"<<<EOT\n  a ) ] , text\n  EOT", "unknown:<<<EOT a ) ] , text EOT"},
		{"<<<'EOT'\nnowdoc\nEOT", "unknown:<<<'EOT' nowdoc EOT"},
		{`-'x'`, "unknown:-'x'"},
		{`~5`, "unknown:~5"},
		{`2 ** 3`, "int:8"},
		{`$x instanceof Foo`, "unknown:$x instanceof Foo"},
		{`'a' and 'b'`, "unknown:'a' and 'b'"},
		{`#[Pure] fn () => 1`, "unknown:#[Pure] fn () => 1"},
	} {
		if got := describe(evalOne(t, c.expr, env)); got != c.want {
			t.Errorf("%s\n got %q\nwant %q", c.expr, got, c.want)
		}
	}
}

func TestEvalUnknownKeysAndRecovery(t *testing.T) {
	src := `<?php

declare(strict_types=1);

namespace Foo;

use Illuminate\Support\Str;
use PDO;

$prefix = getenv('X') ?: 'p'; # not evaluated
if (true) { return ['not' => 'this']; }

return [
    // line comment with ] and ) and '
    # hash comment with ]
    /* block ] ) ' " comment */
    'options' => [
        PDO::MYSQL_ATTR_SSL_CA => env('CA'),
        PDO::ATTR_TIMEOUT => 5,
        'known' => 'yes',
    ],
    'closure' => function ($a) {
        $b = [1, 2, 3];
        return array_map(fn ($x) => $x + 1, $b);
    },
    'arrow' => fn () => ['k' => 'v'],
    'aliases' => Facade::defaultAliases()->merge([
        'Redis' => Illuminate\Support\Facades\Redis::class,
    ])->toArray(),
    'obj' => new \ArrayObject([1, 2]),
    'strange' => 1 +,
    'still' => env('STILL', 'here'),
];
`
	v, err := EvalConfig("config/x.php", []byte(src), EvalContext{Root: "/app", Env: envMap(map[string]string{"CA": "/ca.pem"})})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(v); got != "[options=[?PDO::MYSQL_ATTR_SSL_CA=string:/ca.pem ?PDO::ATTR_TIMEOUT=int:5 known=string:yes] "+
		"closure=unknown:function ($a) { $b = [1, 2, 3]; return array_map(fn ($x) => $x + 1, $b); } "+
		"arrow=unknown:fn () => ['k' => 'v'] "+
		"aliases=unknown:Facade::defaultAliases()->merge([ 'Redis' => Illuminate\\Support\\Facades\\Redis::class, ])->toArray() "+
		"obj=unknown:new \\ArrayObject([1, 2]) strange=unknown:1 + still=string:here]" {
		t.Errorf("got %s", got)
	}
	if got := v.Get("options").Entries[0].Value; got.Pos.String() != "config/x.php:18" || len(got.EnvKeys) != 1 || got.EnvKeys[0] != "CA" {
		t.Errorf("options[0] = %+v", got)
	}
	if got := v.Get("aliases"); got.Pos.String() != "config/x.php:27" {
		t.Errorf("aliases at %v", got.Pos)
	}
	if got := v.Get("still"); got.Pos.Line != 32 {
		t.Errorf("still at %v", got.Pos)
	}
	if v.Get("not") != nil {
		t.Error("evaluated a return inside braces")
	}
}

func TestEvalEnvKeysAndPositions(t *testing.T) {
	src := "<?php return [\n" +
		"  'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),\n" +
		"  'debug' => (bool) env('APP_DEBUG', false),\n" +
		"  'plain' => 'x',\n" +
		"  'unknown' => env('A') . foo(env('B')),\n" +
		"];"
	unset, err := EvalConfig("config/database.php", []byte(src), EvalContext{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := EvalConfig("config/database.php", []byte(src), EvalContext{Env: envMap(map[string]string{"REDIS_PREFIX": "p_", "APP_DEBUG": "(true)"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		v    *Value
		want string
		keys string
		pos  string
	}{
		{unset.Get("prefix"), "string:laravel_database_", "REDIS_PREFIX,APP_NAME", "config/database.php:2"},
		{set.Get("prefix"), "string:p_", "REDIS_PREFIX", "config/database.php:2"},
		{unset.Get("debug"), "bool:", "APP_DEBUG", "config/database.php:3"},
		{set.Get("debug"), "bool:1", "APP_DEBUG", "config/database.php:3"},
		{set.Get("plain"), "string:x", "", "config/database.php:4"},
		{set.Get("unknown"), "unknown:env('A') . foo(env('B'))", "A", "config/database.php:5"},
	} {
		if got := describe(c.v); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
		if got := strings.Join(c.v.EnvKeys, ","); got != c.keys {
			t.Errorf("%s: EnvKeys %q, want %q", c.want, got, c.keys)
		}
		if c.v.Pos.String() != c.pos {
			t.Errorf("%s: at %v, want %s", c.want, c.v.Pos, c.pos)
		}
	}
}

func TestEvalExprTextIsBounded(t *testing.T) {
	long := "foo(" + strings.Repeat("'abcdefghij', ", 50) + ")"
	v := evalOne(t, long, nil)
	if v.Kind != KindUnknown || len(v.Expr) > maxExprLen+len("…") || !strings.HasPrefix(v.Expr, "foo('abcdefghij',") || !strings.HasSuffix(v.Expr, "…") {
		t.Errorf("Expr = %q", v.Expr)
	}
}

func TestEvalWithoutRoot(t *testing.T) {
	v, err := EvalConfig("config/x.php", []byte("<?php return ['a' => base_path('x'), 'b' => __DIR__, 'c' => 1];"), EvalContext{})
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(v); got != "[a=unknown:base_path('x') b=unknown:__DIR__ c=int:1]" {
		t.Errorf("got %s", got)
	}
	v, err = EvalConfig("/abs/config/x.php", []byte("<?php return ['b' => __DIR__];"), EvalContext{})
	if err != nil || describe(v) != "[b=string:/abs/config]" {
		t.Errorf("absolute file: %v %s", err, describe(v))
	}
}

func TestEvalConfigRejects(t *testing.T) {
	deep := "<?php return " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + ";"
	for _, c := range []struct {
		src  string
		line int
	}{
		{"", 1},
		{"return [];", 1},
		{"<?php\n\necho 'no return';", 3},
		{"<?php\nreturn 'string';", 2},
		{"<?php\nreturn array_merge([], []);", 2},
		{"<?php\nreturn [\n'a' => 1,\n", 4},
		{"<?php\nreturn [\n'a' => 'unterminated,\n];", 3},
		{"<?php\nreturn ['a' => 1] + ['b' => 2];", 2},
		{"<?php\nreturn ['a' => 1)];", 2},
		{"<?php return [\n/* unterminated", 2},
		{deep, 1},
		{"<?php return " + strings.Repeat("!", 1000) + "1;", 1},
		{"<?php return [" + strings.Repeat("1 ? ", 400) + "1" + strings.Repeat(" : 1", 400) + "];", 1},
		{"<?php return [" + strings.Repeat("null ?? ", 400) + "1];", 1},
	} {
		_, err := EvalConfig("config/x.php", []byte(c.src), EvalContext{})
		var ee *EvalError
		if !errors.As(err, &ee) {
			t.Errorf("EvalConfig(%.60q) = %v, want an EvalError", c.src, err)
			continue
		}
		if ee.Line != c.line || ee.File != "config/x.php" {
			t.Errorf("EvalConfig(%.60q): error at line %d, want %d (%v)", c.src, ee.Line, c.line, err)
		}
	}
	ok := "<?php return " + strings.Repeat("[", maxNesting) + strings.Repeat("]", maxNesting) + ";"
	if _, err := EvalConfig("config/x.php", []byte(ok), EvalContext{}); err != nil {
		t.Errorf("%d nested arrays: %v", maxNesting, err)
	}
}

func TestEvalAcceptsClosingTagAndParens(t *testing.T) {
	for src, want := range map[string]string{
		"<?php return ['a' => 1] ?>\ntrailing output": "[a=int:1]",
		"<?php return (['a' => 1]);":                  "[a=int:1]",
		"<?php\nreturn array('a' => (int) '5',);":     "[a=int:5]",
	} {
		v, err := EvalConfig("c.php", []byte(src), EvalContext{})
		if err != nil {
			t.Errorf("%q: %v", src, err)
			continue
		}
		if got := describe(v); got != want {
			t.Errorf("%q = %s, want %s", src, got, want)
		}
	}
	// A long elvis chain is a loop, not recursion: no depth limit applies.
	v, err := EvalConfig("c.php", []byte("<?php return [''"+strings.Repeat(" ?: 0", 1000)+" ?: 'last'];"), EvalContext{})
	if err != nil || describe(v) != "[0=string:last]" {
		t.Errorf("elvis chain: %v %s", err, describe(v))
	}
}

// PHP accumulates overflowing hex, octal and binary literals digit by digit
// in a double; var_export shows the exact results (checked with PHP 8.2).
func TestOverflowingLiterals(t *testing.T) {
	for lit, want := range map[string]float64{
		"0b" + strings.Repeat("1", 64): 1.844674407370955e19,
		"0xFFFFFFFFFFFFFFFF":           1.8446744073709552e19,
		"0x1FFFFFFFFFFFFFFFF":          3.6893488147419103e19,
		"0777777777777777777777777":    4.722366482869645e21,
		"99999999999999999999":         1e20,
	} {
		if v := evalOne(t, lit, nil); v.Kind != KindFloat || v.Float != want {
			t.Errorf("%s = %+v, want %v", lit, v, want)
		}
	}
}

// Shapes from the Laravel 11/12 skeleton that the 8.x fixtures do not have.
func TestEvalModernSkeletonShapes(t *testing.T) {
	src := `<?php

use Illuminate\Support\Str;

return [
    'previous_keys' => [
        ...array_filter(
            explode(',', (string) env('APP_PREVIOUS_KEYS', ''))
        ),
    ],
    'maintenance' => [
        'driver' => env('APP_MAINTENANCE_DRIVER', 'file'),
    ],
    'mysql' => [
        'url' => env('DB_URL'),
        'options' => extension_loaded('pdo_mysql') ? array_filter([
            (PHP_VERSION_ID >= 80500 ? \Pdo\Mysql::ATTR_SSL_CA : \PDO::MYSQL_ATTR_SSL_CA) => env('MYSQL_ATTR_SSL_CA'),
        ]) : [],
    ],
    'stack' => explode(',', (string) env('LOG_STACK', 'single')),
    'retry_after' => (int) env('DB_QUEUE_RETRY_AFTER', 90),
    'prefix' => env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-'),
    'lottery' => [2, 100],
];
`
	v, err := EvalConfig("config/app.php", []byte(src), EvalContext{Root: "/app"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[previous_keys=[?...array_filter( explode(',', (string) env('APP_PREVIOUS_KEYS', '')) )=unknown:array_filter( explode(',', (string) env('APP_PREVIOUS_KEYS', '')) )] " +
		"maintenance=[driver=string:file] " +
		"mysql=[url=null: options=unknown:extension_loaded('pdo_mysql') ? array_filter([ (PHP_VERSION_ID >= 80500 ? \\Pdo\\Mysql::ATTR_SSL_CA : \\PDO::MYSQL_ATTR_SSL…] " +
		"stack=unknown:explode(',', (string) env('LOG_STACK', 'single')) retry_after=int:90 prefix=string:laravel-database- lottery=[0=int:2 1=int:100]]"
	if got := describe(v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestCastEnv(t *testing.T) {
	for raw, want := range map[string]string{
		"true": "bool:1", "(TRUE)": "bool:1", "TrUe": "bool:1", "(true": "string:(true", " true": "string: true",
		"false": "bool:", "(False)": "bool:", "empty": "string:", "(EMPTY)": "string:", "null": "null:", "(Null)": "null:",
		`"a"`: "string:a", `'a'`: "string:a", `"a'`: `string:"a'`, `''`: "string:", `"`: `string:"`,
		"\"a\nb\"": "string:\"a\nb\"", "\"a\rb\"": "string:a\rb", `"'"'`: `string:"'"'`, `"x" `: `string:"x" `,
		"": "string:", "0": "string:0", "TRUE\x00": "string:TRUE\x00", "\xffnull": "string:\xffnull",
	} {
		if got := describe(CastEnv(raw)); got != want {
			t.Errorf("CastEnv(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestEvalConcatBudget(t *testing.T) {
	big := strings.Repeat("x", maxSourceBytes)
	src := "<?php return [" + strings.Repeat("env('BIG') . env('BIG'),", 10) + "];"
	v, err := EvalConfig("c.php", []byte(src), EvalContext{Env: envMap(map[string]string{"BIG": big})})
	if err != nil {
		t.Fatal(err)
	}
	known := 0
	for _, e := range v.Entries {
		if e.Value.Kind == KindString {
			known++
		}
	}
	if want := maxConcatBytes / (2 * maxSourceBytes); known != want {
		t.Errorf("%d concatenations known, want %d", known, want)
	}
}
