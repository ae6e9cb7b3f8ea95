package payload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// horizonReordered is a payload as a Redis worker writes it to failed_jobs
// after one release under Horizon: re-encoded by cjson (hash order, `\/`
// kept), with Horizon's keys, and displayName far behind a large command.
func horizonReordered(command string) string {
	return `{"type":"notification","timeout":null,"tags":["App\\Models\\Customer:42"],"id":"9f1c","data":{"command":"` + command +
		`","commandName":"Illuminate\\Notifications\\SendQueuedNotifications"},"pushedAt":"1700000000.1234","silenced":false,` +
		`"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":2,"displayName":"App\\Notifications\\InvoicePaid",` +
		`"uuid":"8d2e","attempts":1,"backoff":"1","maxExceptions":null,"retryUntil":null,"failOnTimeout":false}`
}

func TestJobClassWhereverTheKeySits(t *testing.T) {
	command := `O:48:\"Illuminate\\Notifications\\SendQueuedNotifications\":1:{s:5:\"lines\";s:4000:\"` + strings.Repeat("x", 4000) + `\";}`
	raw := []byte(horizonReordered(command))
	if i := bytes.Index(raw, []byte(ClassKeys[windowDisplayName])); i < 4000 {
		t.Fatalf("fixture: displayName at %d, want it behind the command", i)
	}
	if got := JobClass(raw); got != `App\Notifications\InvoicePaid` {
		t.Errorf("JobClass(whole) = %q", got)
	}
	// What a listing reads gives the same class as the whole payload.
	w := ClassWindows(raw)
	if got := JobClass(w); got != `App\Notifications\InvoicePaid` {
		t.Errorf("JobClass(windows) = %q", got)
	}
	if !bytes.Equal(ClassWindows(raw), w) || bytes.Count(w, []byte{ClassWindowSep}) != len(ClassKeys) {
		t.Errorf("windows: %q", w)
	}
	for i, part := range bytes.Split(w[1:], []byte{ClassWindowSep}) {
		if !bytes.HasPrefix(part, []byte(ClassKeys[i])) || utf8.RuneCount(part) > ClassWindowChars {
			t.Errorf("window %d: %q", i, part)
		}
	}

	// Without displayName the command's class is next, then commandName.
	noDisplay := bytes.Replace(raw, []byte(`"displayName":"App\\Notifications\\InvoicePaid",`), nil, 1)
	if got := JobClass(noDisplay); got != `Illuminate\Notifications\SendQueuedNotifications` {
		t.Errorf("without displayName: %q", got)
	}
	encrypted := bytes.Replace(noDisplay, []byte(command), []byte("eyJpdiI6IjEyMyJ9"), 1)
	if got := JobClass(encrypted); got != `Illuminate\Notifications\SendQueuedNotifications` {
		t.Errorf("encrypted, without displayName: %q", got)
	}
}

func TestJobClassWindowLimits(t *testing.T) {
	long := strings.Repeat("N", ClassWindowChars)
	raw := []byte(`{"displayName":"` + long + `","job":"A@b"}`)
	// A displayName that does not fit its window is unreadable everywhere.
	if got := JobClass(raw); got != "A@b" {
		t.Errorf("JobClass(too long displayName) = %q", got)
	}
	fits := strings.Repeat("ü", ClassWindowChars-len(ClassKeys[windowDisplayName])-2)
	raw = []byte(`{"displayName":"` + fits + `","job":"A@b"}`)
	if got := JobClass(raw); got != fits {
		t.Errorf("JobClass(multibyte displayName that fits in characters) = %q", got)
	}
	// Odd values: whitespace, escapes, not a string, text that is not JSON.
	for raw, want := range map[string]string{
		`{"displayName": "A\"B\u00e9"}`:                   `A"Bé`,
		`{"displayName":null,"job":"J@x"}`:                "J@x",
		`{"displayName":"","data":{"commandName":"C"}}`:   "C",
		`{"data":{"command":"O:x:\"A\":0:{}"},"job":"J"}`: "J",
		"\x1f":                     "",
		"\x1f\x1f\x1f\x1f\x1f\x1f": "",
		`"displayName":"tail`:      "",
		"\xff\xfe\"job\":\"K\"":    "K",
	} {
		if got := JobClass([]byte(raw)); got != want {
			t.Errorf("JobClass(%q) = %q, want %q", raw, got, want)
		}
	}
}

// cutChars counts runes in valid UTF-8 and steps other bytes as SQLite's
// substr does.
func TestCutCharsLikeSQLite(t *testing.T) {
	// a | \x80 | é | \xc3\x80\x80 | z | \xff | \xfe
	raw := []byte("a\x80\xc3\xa9\xc3\x80\x80z\xff\xfe")
	for n, want := range []string{"", "a", "a\x80", "a\x80\xc3\xa9", "a\x80\xc3\xa9\xc3\x80\x80", "a\x80\xc3\xa9\xc3\x80\x80z"} {
		if got := string(cutChars(raw, n)); got != want {
			t.Errorf("cutChars(%d) = %q, want %q", n, got, want)
		}
	}
	if got := string(cutChars([]byte("héllo"), 2)); got != "hé" {
		t.Errorf("valid UTF-8: %q", got)
	}
}

// Real rows: what Laravel 8.83 wrote to failed_jobs after Redis re-encoded
// released jobs with Horizon's keys (testdata/laravel-rows/redis-*.json).
func TestJobClassOnRealRedisRows(t *testing.T) {
	files, err := filepath.Glob("../../testdata/laravel-rows/redis-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no redis rows: %v", err)
	}
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			Payload string
			Expect  struct{ Class string }
		}
		if err := json.Unmarshal(raw, &rows); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, r := range rows {
			whole := []byte(r.Payload)
			if got := JobClass(whole); got != r.Expect.Class || JobClass(ClassWindows(whole)) != got {
				t.Errorf("%s: JobClass = %q, windows %q, want %q", filepath.Base(path), got, JobClass(ClassWindows(whole)), r.Expect.Class)
			}
		}
	}
}
