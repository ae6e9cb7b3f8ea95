package redact

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestKeysMatch(t *testing.T) {
	k := DefaultKeys()
	for name, want := range map[string]bool{
		"password": true, "PASSWORD": true, "user_password": true, "password_confirmation": true, "newPasswords": true,
		"X-Password": true, "passwd": true, "client_secret": true, "secrets": true, "token": true, "stripe_token": true,
		"accessToken": true, "api_key": true, "apiKey": true, "X-API-Key": true, "APIKey": true, "stripe_api_key": true,
		"apikey": true, "Authorization": true, "auth": true, "basic_auth": true, "authToken": true, "Cookie": true,
		"cookies": true, "card": true, "card_number": true, "giftCard": true, "cvv": true, "iban": true, "ssn": true,
		"customer_ssn": true, "\x00*\x00password": true, "\x00App\\Jobs\\Charge\x00cardNumber": true,
		"discard": false, "author": false, "authored_by": false, "cardinality": false, "email": false, "tokenizer": false,
		"passenger": false, "key": false, "api": false, "": false, "id": false, strings.Repeat("a", 200) + "_token": false,
	} {
		if got := k.Match(name); got != want {
			t.Errorf("Match(%q) = %v, want %v", name, got, want)
		}
	}
	var zero Keys
	for _, n := range DefaultKeyNames() {
		if !zero.Match(n) {
			t.Errorf("the zero Keys does not match the default %q", n)
		}
	}
}

func TestParseKeys(t *testing.T) {
	k, err := ParseKeys(" pin , Stripe-Customer ")
	if err != nil || !k.Match("pin") || !k.Match("stripe_customer") || k.Match("password") {
		t.Errorf("replacing list: %v %v", k.entries, err)
	}
	k, err = ParseKeys("+pin,+otp")
	if err != nil || !k.Match("pin") || !k.Match("otp_code") || !k.Match("password") {
		t.Errorf("added list: %v %v", k.entries, err)
	}
	for _, bad := range []string{"", " , ", "pin,+otp", "---"} {
		if _, err := ParseKeys(bad); !errors.Is(err, ErrBadKeys) {
			t.Errorf("ParseKeys(%q): %v", bad, err)
		}
	}
}

// secret is the value every case hides; it must not survive.
const secret = "hunter2-S3cr3t"

func TestKeysText(t *testing.T) {
	k := DefaultKeys()
	for _, c := range []struct{ in, want string }{
		{`login failed: password=` + secret + `&user=bob`, `login failed: password=[redacted]&user=bob`},
		{`POST https://api.example.com/v1?api_key=` + secret + ` returned 401`, `POST https://api.example.com/v1?api_key=[redacted] returned 401`},
		{`{"user":"bob","password":"` + secret + `","n":1}`, `{"user":"bob","password":"[redacted]","n":1}`},
		{`{"card": {"number": "4242", "cvc": "` + secret + `"}, "id": 7}`, `{"card": [redacted], "id": 7}`},
		{`payload {\"token\":\"` + secret + `\"} rejected`, `payload {\"token\":\"[redacted]\"} rejected`},
		{"Array\n(\n    [password] => " + secret + "\n    [email] => a@b.c\n)", "Array\n(\n    [password] => [redacted]\n    [email] => a@b.c\n)"},
		{`array ('secret' => '` + secret + `', 'x' => 1)`, `array ('secret' => '[redacted]', 'x' => 1)`},
		{`["ssn"]=> string(14) "` + secret + `"`, `["ssn"]=> string(14) "[redacted]"`},
		{"Authorization: Bearer " + secret + "\nHost: x", "Authorization: [redacted]\nHost: x"},
		{`cookie: laravel_session=` + secret + `; path=/`, `cookie: [redacted]; path=/`},
		{`token='` + secret + `' expired`, `token='[redacted]' expired`},
		{`retry with STRIPE_TOKEN = ` + secret, `retry with STRIPE_TOKEN = [redacted]`},
		{`Undefined array key "password"`, `Undefined array key "password"`},
		{`author=ann discard=1 email: a@b.c`, `author=ann discard=1 email: a@b.c`},
		{`url: https://x.test/?token=` + secret, `url: https://x.test/?token=[redacted]`},
		{`password=`, `password=`},
	} {
		got := k.Text(c.in)
		if got != c.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
		if strings.Contains(got, secret) {
			t.Errorf("Text(%q) leaks the value: %q", c.in, got)
		}
		if again := k.Text(got); again != got {
			t.Errorf("Text is not idempotent: %q → %q", got, again)
		}
	}
}

// command is a Laravel command serialization with listed properties, one
// nested in an array and one a protected property.
const command = `O:23:"App\Jobs\ChargeCustomer":4:{s:10:"customerId";i:7;s:11:"` + "\x00*\x00" + `password";s:14:"` + secret + `";s:7:"options";a:2:{s:9:"api_token";s:14:"` + secret + `";s:4:"mode";s:4:"live";}s:5:"queue";N;}`

func TestKeysPHP(t *testing.T) {
	k := DefaultKeys()
	got, ok := k.PHP(command)
	if !ok || strings.Contains(got, secret) {
		t.Fatalf("PHP: ok %v, %q", ok, got)
	}
	want := strings.ReplaceAll(command, `s:14:"`+secret+`"`, `s:10:"[redacted]"`)
	if got != want {
		t.Errorf("PHP:\n got %q\nwant %q", got, want)
	}
	if again, _ := k.PHP(got); again != got {
		t.Errorf("not idempotent: %q", again)
	}
	// A listed key whose value is an array is masked whole, nested
	// listed keys and all.
	nested := `a:1:{s:4:"auth";a:1:{s:5:"token";s:3:"abc";}}`
	if got, ok := k.PHP(nested); !ok || got != `a:1:{s:4:"auth";s:10:"[redacted]";}` {
		t.Errorf("nested: %v %q", ok, got)
	}
	for _, bad := range []string{"", "O:1:", `s:99:"short";`, `a:1:{s:8:"password";}`, "x" + command, command + "x"} {
		if got, ok := k.PHP(bad); ok || got != bad {
			t.Errorf("PHP(%q) = %q, %v: want it back unchanged and not ok", bad, got, ok)
		}
	}
	// Custom serialization is opaque and kept.
	custom := `a:1:{s:1:"c";C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}}`
	if got, ok := k.PHP(custom); !ok || got != custom {
		t.Errorf("custom: %v %q", ok, got)
	}
}

func TestKeysJSON(t *testing.T) {
	k := DefaultKeys()
	cmd, _ := json.Marshal(command)
	payload := `{"uuid":"u-1","displayName":"App\\Jobs\\ChargeCustomer","headers": {"Authorization":"Bearer ` + secret + `"},` +
		"\n  " + `"data":{"commandName":"App\\Jobs\\ChargeCustomer","command":` + string(cmd) + `},"tags":["a", 1, true, null, -1.5e3],"token":{"a":[1,{"b":"` + secret + `"}]}}`
	got := string(k.JSON([]byte(payload)))
	if strings.Contains(got, secret) || !json.Valid([]byte(got)) {
		t.Fatalf("JSON: %s", got)
	}
	// Everything else is kept byte for byte: the order, the blanks, the
	// numbers.
	for _, keep := range []string{`{"uuid":"u-1","displayName":"App\\Jobs\\ChargeCustomer","headers": {"Authorization":"[redacted]"},` + "\n  " + `"data":{`,
		`"tags":["a", 1, true, null, -1.5e3],"token":"[redacted]"}`, `s:10:\"customerId\";i:7;`} {
		if !strings.Contains(got, keep) {
			t.Errorf("JSON lost %q:\n%s", keep, got)
		}
	}
	var doc struct {
		Data struct {
			Command string `json:"command"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	if want, _ := k.PHP(command); doc.Data.Command != want {
		t.Errorf("command inside the payload: %q", doc.Data.Command)
	}
	// Not JSON: masked as text.
	if got := string(k.JSON([]byte(`{"password":"` + secret + `"`))); strings.Contains(got, secret) {
		t.Errorf("broken JSON leaks: %s", got)
	}
	// Deeper than the limit: masked as text, not a stack overflow.
	deep := strings.Repeat("[", maxJSONDepth+10) + `{"password":"` + secret + `"}` + strings.Repeat("]", maxJSONDepth+10)
	if got := string(k.JSON([]byte(deep))); strings.Contains(got, secret) {
		t.Error("deep JSON leaks")
	}
}

// shapes put a value after a listed key in every syntax Text, JSON and PHP
// read.
func shapes(v string) (texts []string, jsonDoc, php string) {
	q, _ := json.Marshal(v)
	texts = []string{"password=" + v, `"token": ` + string(q), "[secret] => " + v, "'auth' => " + strconv.Quote(v),
		"x-api-key: " + v, `{"card":` + string(q) + `}`}
	return texts, `{"a":{"password":` + string(q) + `}}`, `a:1:{s:3:"cvv";s:` + strconv.Itoa(len(v)) + `:"` + v + `";}`
}

func FuzzKeys(f *testing.F) {
	f.Add(`{"password":"x"}`, secret)
	f.Add(command, "tok en")
	f.Add("Authorization: Basic abc\npassword='a\\'b'", `a"b`)
	f.Add(`[password] => {"x": [1, 2]}`, "v;w")
	f.Add(`"token": "token"`, "token")
	f.Fuzz(func(t *testing.T, in, v string) {
		k := DefaultKeys()
		out := k.Text(in)
		if k.Text(out) != out {
			t.Errorf("Text not idempotent on %q", in)
		}
		if utf8.ValidString(in) && !utf8.ValidString(out) {
			t.Errorf("Text made invalid UTF-8 of %q", in)
		}
		if json.Valid([]byte(in)) && !json.Valid(k.JSON([]byte(in))) {
			t.Errorf("JSON broke the document %q", in)
		}
		if got, ok := k.PHP(in); ok {
			if again, ok2 := k.PHP(got); !ok2 || again != got {
				t.Errorf("PHP not idempotent on %q", in)
			}
		}
		// A value in any shape is gone, when it is one Text can delimit.
		if len(v) < 4 || strings.ContainsAny(v, " \t\r\n,;&)]}<>\"'\\[{") || strings.Contains(Redacted, v) || !utf8.ValidString(v) {
			return
		}
		// A value that is part of the shapes' own text ("token") stays there.
		t0, d0, p0 := shapes("")
		if strings.Contains(strings.Join(append(t0, d0, p0), "\n"), v) {
			return
		}
		texts, doc, php := shapes(v)
		for _, s := range texts {
			if got := k.Text(s); strings.Contains(got, v) {
				t.Errorf("Text(%q) = %q", s, got)
			}
		}
		if got := string(k.JSON([]byte(doc))); strings.Contains(got, v) {
			t.Errorf("JSON(%q) = %q", doc, got)
		}
		if got, ok := k.PHP(php); !ok || strings.Contains(got, v) {
			t.Errorf("PHP(%q) = %q, %v", php, got, ok)
		}
	})
}

func TestKeysTextPHP(t *testing.T) {
	k := DefaultKeys()
	for _, in := range []string{
		command,
		strconv.Quote(command), // Go's escapes: \x00, \"
		strings.ReplaceAll(strings.ReplaceAll(command, `"`, `\"`), "\x00", `\u0000`), // JSON's
	} {
		got := k.Text(in)
		if strings.Contains(got, secret) || !strings.Contains(got, "customerId") {
			t.Errorf("Text(%q) = %q", in, got)
		}
		if k.Text(got) != got {
			t.Errorf("not idempotent: %q", got)
		}
	}
}

// BenchmarkTextWithoutKeys: the cost of masking text that holds no key
// (an exception's trace); a bounded repetition in textKeyRE once made it
// about 60 times slower.
func BenchmarkTextWithoutKeys(b *testing.B) {
	in := strings.Repeat("#12 /var/www/app/vendor/laravel/framework/src/Illuminate/Queue/Worker.php(213) Illuminate\\Queue\\Worker->process()\n", 600)
	k := DefaultKeys()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		k.Text(in)
	}
}
