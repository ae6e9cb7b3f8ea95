package phpser

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func fixture(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ignoreSpans leaves Start and End to TestSpans.
func ignoreSpans() cmp.Option { return cmpopts.IgnoreFields(Value{}, "Start", "End") }

func TestDecodeScalars(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"N;", Value{Kind: Null}},
		{"b:1;", Value{Kind: Bool, Bool: true}},
		{"b:0;", Value{Kind: Bool}},
		{"i:-42;", Value{Kind: Int, Int: -42}},
		{"i:9223372036854775807;", Value{Kind: Int, Int: math.MaxInt64}},
		{"d:0.5;", Value{Kind: Float, Float: 0.5}},
		{"d:1.0E+25;", Value{Kind: Float, Float: 1e25}},
		{"d:-INF;", Value{Kind: Float, Float: math.Inf(-1)}},
		{`s:0:"";`, Value{Kind: String}},
		{`s:5:"a"b;c";`, Value{Kind: String, Str: `a"b;c`}},
		{`s:6:"héllo";`, Value{Kind: String, Str: "héllo"}}, // length in bytes
		{`S:3:"a\00b";`, Value{Kind: String, Str: "a\x00b"}},
		{"r:2;", Value{Kind: Ref, Int: 2}},
		{"R:3;", Value{Kind: Ref, Int: 3, ByRef: true}},
		{`E:21:"App\Enums\Status:Paid";`, Value{Kind: Enum, Class: `App\Enums\Status`, Str: "Paid"}},
		{`C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}`, Value{Kind: Custom, Class: "ArrayObject", Str: "x:i:0;a:0:{};m:a:0:{}"}},
	}
	for _, tt := range tests {
		got, err := Decode(tt.in)
		if err != nil {
			t.Errorf("Decode(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got, ignoreSpans()); diff != "" {
			t.Errorf("Decode(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestDecodeNaN(t *testing.T) {
	v, err := Decode("d:NAN;")
	if err != nil || v.Kind != Float || !math.IsNaN(v.Float) {
		t.Errorf("Decode(d:NAN;) = %+v, %v", v, err)
	}
}

func TestDecodeVisibility(t *testing.T) {
	in := "O:3:\"Foo\":3:{s:1:\"a\";i:1;s:4:\"\x00*\x00b\";i:2;s:6:\"\x00Foo\x00c\";i:3;}"
	v, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Prop{
		{Name: "a", Visibility: Public, Value: Value{Kind: Int, Int: 1}},
		{Name: "b", Visibility: Protected, Value: Value{Kind: Int, Int: 2}},
		{Name: "c", Visibility: Private, DeclaringClass: "Foo", Value: Value{Kind: Int, Int: 3}},
	}
	if diff := cmp.Diff(want, v.Props, ignoreSpans()); diff != "" {
		t.Errorf("props (-want +got):\n%s", diff)
	}
}

// The fixtures are real Laravel 8.83 data.command values.
func TestDecodeLaravelFixtures(t *testing.T) {
	for _, name := range []string{"object_job.ser", "closure.ser", "listener.ser", "notification.ser"} {
		t.Run(name, func(t *testing.T) {
			v, err := Decode(fixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if v.Kind != Object || v.Class == "" {
				t.Fatalf("top value is %v %q, want an object", v.Kind, v.Class)
			}
		})
	}

	v, err := Decode(fixture(t, "object_job.ser"))
	if err != nil {
		t.Fatal(err)
	}
	secret, _ := prop(v, "secret")
	if secret.Str != `héllo "quoted" ünïcode` {
		t.Errorf("private secret = %q", secret.Str)
	}
	for _, p := range v.Props {
		if p.Name == "secret" && (p.Visibility != Private || p.DeclaringClass != `App\Jobs\ProcessPodcast`) {
			t.Errorf("secret prop = %+v", p)
		}
		if p.Name == "podcastId" && p.Visibility != Protected {
			t.Errorf("podcastId prop = %+v", p)
		}
	}
}

func TestFormatObjectJob(t *testing.T) {
	v, err := Decode(fixture(t, "object_job.ser"))
	if err != nil {
		t.Fatal(err)
	}
	want := `App\Jobs\ProcessPodcast {
  tries: 3
  timeout: 120
  backoff: [10, 60]
  podcastId (protected): 7
  secret (private): "héllo \"quoted\" ünïcode"
  order: App\Models\Order#1042
  orders: App\Models\Order#[1,2,3]
  options: [
    "force" => true
    "ratio" => 0.5
    "tags" => ["a", "b"]
    7 => null
  ]
  queue: "podcasts"
}`
	if got := FormatWith(v, FormatOptions{HideNoise: true}); got != want {
		t.Errorf("FormatWith(HideNoise) =\n%s\nwant\n%s", got, want)
	}
	full := FormatWith(v, FormatOptions{})
	for _, s := range []string{"  job: null\n", "  chainConnection: null\n", "  middleware: []\n", "  chained: []\n"} {
		if !strings.Contains(full, s) {
			t.Errorf("Format without options lacks %q", s)
		}
	}
}

func TestFormatWrappers(t *testing.T) {
	tests := []struct {
		file     string
		contains []string
		absent   []string
	}{
		{"closure.ser", []string{"closure: Closure\n"}, []string{"function ()", "use ($order)"}},
		{"notification.ser", []string{"notifiables: App\\Models\\User#[5]\n", "amount: 99.95\n", `channels: ["mail"]`}, []string{"  connection: null"}},
		{"listener.ser", []string{`class: "App\Listeners\SendShipmentNotification"`, "0 => App\\Events\\OrderShipped {\n      orderId: 1042\n    }"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			v, err := Decode(fixture(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got := FormatWith(v, FormatOptions{HideNoise: true})
			for _, s := range tt.contains {
				if !strings.Contains(got, s) {
					t.Errorf("output lacks %q:\n%s", s, got)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(got, s) {
					t.Errorf("output contains %q:\n%s", s, got)
				}
			}
		})
	}
}

func TestFormatKeepsNonDefaultNoiseProps(t *testing.T) {
	in := `O:3:"Job":3:{s:10:"connection";s:5:"redis";s:5:"delay";i:30;s:10:"middleware";a:1:{i:0;s:1:"x";}}`
	v, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "Job {\n  connection: \"redis\"\n  delay: 30\n  middleware: [\"x\"]\n}"
	if got := FormatWith(v, FormatOptions{HideNoise: true}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFormatEscapesHostileText(t *testing.T) {
	in := "O:5:\"X\x1b[2J\":1:{s:5:\"\u202eab\";s:6:\"\x1b]0;t\x07\";}"
	v, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	got := FormatWith(v, FormatOptions{})
	for _, bad := range []string{"\x1b", "\x07", "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("output contains %q: %q", bad, got)
		}
	}
	want := "X\\x1b[2J {\n  \\u202eab: \"\\x1b]0;t\\a\"\n}"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestFormatScalars(t *testing.T) {
	tests := []struct{ in, want string }{
		{"d:3;", "3.0"},
		{"d:INF;", "INF"},
		{`a:2:{s:1:"k";b:0;i:5;N;}`, "[\n  \"k\" => false\n  5 => null\n]"},
		{"a:0:{}", "[]"},
		{`O:8:"stdClass":0:{}`, "stdClass {}"},
		{`E:14:"App\Status:Pay";`, `App\Status::Pay`},
		{"R:2;", "&2"},
	}
	for _, tt := range tests {
		v, err := Decode(tt.in)
		if err != nil {
			t.Fatalf("Decode(%q): %v", tt.in, err)
		}
		if got := FormatWith(v, FormatOptions{}); got != tt.want {
			t.Errorf("FormatWith(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatCutsLongStrings(t *testing.T) {
	v := Value{Kind: String, Str: strings.Repeat("é", 300)}
	got := FormatWith(v, FormatOptions{MaxString: 11})
	if got != `"ééééé"…(600 bytes)` {
		t.Errorf("got %q", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrSyntax},
		{"unknown tag", "x:1;", ErrSyntax},
		{"truncated int", "i:12", ErrSyntax},
		{"bad int", "i:1x;", ErrSyntax},
		{"int overflow", "i:99999999999999999999;", ErrSyntax},
		{"bad bool", "b:2;", ErrSyntax},
		{"bad float", "d:0x10;", ErrSyntax},
		{"string too long", `s:10:"abc";`, ErrSyntax},
		{"string length lies short", `s:1:"abc";`, ErrSyntax},
		{"negative length", `s:-1:"";`, ErrSyntax},
		{"huge array count", "a:999999999999:{}", ErrSyntax},
		{"huge length", "s:9223372036854775807:\"\";", ErrSyntax},
		{"truncated object", `O:3:"Foo":2:{s:1:"a";i:1;`, ErrSyntax},
		{"array key is an array", "a:1:{a:0:{}i:1;}", ErrSyntax},
		{"trailing data", "N;N;", ErrSyntax},
		{"zero reference", "r:0;", ErrSyntax},
		{"enum without case", `E:3:"Foo";`, ErrSyntax},
		{"empty class", `O:0:"":0:{}`, ErrSyntax},
		{"bad escape", `S:1:"\zz";`, ErrSyntax},
		{"too deep", strings.Repeat("a:1:{i:0;", 100) + "N;" + strings.Repeat("}", 100), ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode(%q) error = %v, want %v", tt.in, err, tt.want)
			}
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("error %T is not *Error", err)
			}
		})
	}
}

func TestDecodeNodeLimit(t *testing.T) {
	in := "a:3:{i:0;N;i:1;N;i:2;N;}"
	if _, err := DecodeWithLimits(in, Limits{MaxDepth: 4, MaxNodes: 6}); !errors.Is(err, ErrLimit) {
		t.Errorf("7 nodes with MaxNodes 6: error = %v, want ErrLimit", err)
	}
	if _, err := DecodeWithLimits(in, Limits{MaxDepth: 4, MaxNodes: 7}); err != nil {
		t.Errorf("7 nodes with MaxNodes 7: %v", err)
	}
}

func TestDecodeTruncatedFixture(t *testing.T) {
	s := fixture(t, "object_job.ser")
	for n := 0; n < len(s); n++ {
		if _, err := Decode(s[:n]); err == nil {
			t.Fatalf("Decode of the first %d bytes succeeded", n)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"object_job.ser", "closure.ser", "notification.ser"} {
		f.Add(fixture(f, name))
	}
	f.Add(`C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}`)
	f.Add(`S:3:"a\00b";`)
	f.Add(`E:21:"App\Enums\Status:Paid";`)
	// Counts whose product with the minimum entry size wraps.
	f.Add(`O:8:"App\Jobs":3074457345618258603:{s:1:"a";N;}`)
	f.Add(`a:3074457345618258603:{i:0;N;}`)
	f.Add(`s:9223372036854775807:"x";`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := DecodeWithLimits(s, Limits{MaxDepth: 32, MaxNodes: 10_000})
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrLimit) {
				t.Fatalf("unexpected error type: %v", err)
			}
			return
		}
		out := FormatWith(v, FormatOptions{HideNoise: true})
		if strings.ContainsAny(out, "\x1b\x07\x00\r") {
			t.Fatalf("Format output holds control characters: %q", out)
		}
	})
}

// TestDecodeHugeCounts: a count whose product with the minimum
// entry size overflows int64 passed the size check and made make() panic.
func TestDecodeHugeCounts(t *testing.T) {
	for _, in := range []string{
		`O:8:"App\Jobs":3074457345618258603:{s:1:"a";N;}`,
		`a:3074457345618258603:{i:0;N;}`,
		`a:9223372036854775807:{}`,
		`O:8:"App\Jobs":9223372036854775807:{}`,
		`s:9223372036854775807:"x";`,
		`S:9223372036854775807:"x";`,
		`C:11:"ArrayObject":9223372036854775807:{x}`,
		`O:9223372036854775807:"x":0:{}`,
		`E:9223372036854775807:"A:B";`,
	} {
		if _, err := Decode(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("Decode(%q) = %v, want ErrSyntax", in, err)
		}
	}
}

func TestSpans(t *testing.T) {
	in := `a:2:{s:1:"k";O:1:"C":1:{s:1:"p";d:1.5;}i:0;N;}`
	v, err := Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	obj := v.Items[0].Value
	for _, c := range []struct {
		v    Value
		want string
	}{
		{v, in}, {v.Items[0].Key, `s:1:"k";`}, {obj, `O:1:"C":1:{s:1:"p";d:1.5;}`}, {obj.Props[0].Value, `d:1.5;`},
		{v.Items[1].Key, `i:0;`}, {v.Items[1].Value, `N;`},
	} {
		if got := in[c.v.Start:c.v.End]; got != c.want {
			t.Errorf("span %d..%d is %q, want %q", c.v.Start, c.v.End, got, c.want)
		}
	}
}
