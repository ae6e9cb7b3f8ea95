package payload

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The *.json fixtures are real payloads from Laravel 8.83's
// Queue::createPayload, written by testdata/gen/gen.php.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }

func TestParseFixtures(t *testing.T) {
	ignore := cmpopts.IgnoreFields(Envelope{}, "UUID", "Command", "Data", "ID")
	tests := []struct {
		file string
		want Envelope
	}{
		{"object_job.json", Envelope{
			DisplayName: `App\Jobs\ProcessPodcast`, Job: CallQueuedHandler, MaxTries: ptr(3), Timeout: ptr(120),
			Backoff: "10,60", CommandName: `App\Jobs\ProcessPodcast`, Kind: ObjectJob,
		}},
		{"object_job_redis.json", Envelope{
			DisplayName: `App\Jobs\ProcessPodcast`, Job: CallQueuedHandler, MaxTries: ptr(3), Timeout: ptr(120),
			Backoff: "10,60", CommandName: `App\Jobs\ProcessPodcast`, Kind: ObjectJob, Attempts: ptr(0),
		}},
		{"string_job.json", Envelope{
			DisplayName: `App\Jobs\LegacyHandler`, Job: `App\Jobs\LegacyHandler@handle`, Kind: StringJob,
		}},
		{"closure.json", Envelope{
			DisplayName: "Closure (gen.php:86)", Job: CallQueuedHandler, CommandName: `Illuminate\Queue\CallQueuedClosure`, Kind: Closure,
		}},
		{"listener.json", Envelope{
			DisplayName: `App\Listeners\SendShipmentNotification`, Job: CallQueuedHandler, CommandName: `Illuminate\Events\CallQueuedListener`, Kind: Listener,
		}},
		{"notification.json", Envelope{
			DisplayName: `App\Notifications\InvoicePaid`, Job: CallQueuedHandler, CommandName: `Illuminate\Notifications\SendQueuedNotifications`, Kind: Notification,
		}},
		{"mailable.json", Envelope{
			DisplayName: `App\Mail\OrderConfirmation`, Job: CallQueuedHandler, CommandName: `Illuminate\Mail\SendQueuedMailable`, Kind: Mailable,
		}},
		{"encrypted_aes_256_cbc.json", Envelope{
			DisplayName: `App\Jobs\SendInvoice`, Job: CallQueuedHandler, RetryUntil: ptr(int64(1893456000)),
			CommandName: `App\Jobs\SendInvoice`, Encrypted: true, Kind: ObjectJob,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw := fixture(t, tt.file)
			got, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, ignore); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
			if len(got.UUID) != 36 {
				t.Errorf("UUID = %q", got.UUID)
			}
			if got.Kind != StringJob && !strings.HasPrefix(got.Command, "O:") && !got.Encrypted {
				t.Errorf("Command = %.20q", got.Command)
			}
			if c := JobClass(raw); c != got.DisplayName {
				t.Errorf("JobClass = %q, want the displayName %q", c, got.DisplayName)
			}
		})
	}
}

func TestParseRedisID(t *testing.T) {
	e, err := Parse(fixture(t, "object_job_redis.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.ID) != 32 || len(e.Extra) != 0 {
		t.Errorf("ID = %q, Extra = %v", e.ID, e.Extra)
	}
}

func TestParseStringJobData(t *testing.T) {
	e, err := Parse(fixture(t, "string_job.json"))
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(e.Data, &data); err != nil || data["note"] != "a/b" {
		t.Errorf("Data = %s (%v)", e.Data, err)
	}
	if e.RetryUntil != nil {
		t.Errorf("string jobs carry no retryUntil, got %d", *e.RetryUntil)
	}
}

func TestParseHorizonAndHookKeys(t *testing.T) {
	raw := `{"uuid":"u","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
		`"maxTries":"5","timeout":60.0,"backoff":[10,"60"],"retryUntil":"1700000000","failOnTimeout":1,` +
		`"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}","batchId":"b-1"},` +
		`"telescope_uuid":"t-1","createdAt":1700000001,"type":"job","tags":["App\\Models\\Order:1",7,null],` +
		`"silenced":false,"pushedAt":"1700000000.1234","id":"u","attempts":2,"sentry_baggage_data":{"a":[1]}}`
	e, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := Envelope{
		UUID: "u", DisplayName: `App\Jobs\X`, Job: CallQueuedHandler, MaxTries: ptr(5), Timeout: ptr(60),
		FailOnTimeout: true, Backoff: "10,60", RetryUntil: ptr(int64(1700000000)), CommandName: `App\Jobs\X`,
		Command: `O:10:"App\Jobs\X":0:{}`, BatchID: "b-1", CreatedAt: ptr(int64(1700000001)), ID: "u",
		Attempts: ptr(2), PushedAt: "1700000000.1234", Tags: []string{`App\Models\Order:1`, "7"}, Kind: ObjectJob,
		Extra: []Field{
			{Key: "telescope_uuid", Raw: json.RawMessage(`"t-1"`)},
			{Key: "type", Raw: json.RawMessage(`"job"`)},
			{Key: "silenced", Raw: json.RawMessage(`false`)},
			{Key: "sentry_baggage_data", Raw: json.RawMessage(`{"a":[1]}`)},
		},
	}
	if diff := cmp.Diff(want, e, cmpopts.IgnoreFields(Envelope{}, "Data")); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseOddTypes(t *testing.T) {
	raw := `{"uuid":12,"displayName":null,"job":["x"],"maxTries":"lots","timeout":1e40,"backoff":true,` +
		`"retryUntil":{"a":1},"data":"not an object","tags":"nope","attempts":-1}`
	e, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	want := Envelope{Backoff: "true", Attempts: ptr(-1), Kind: Unknown, Data: json.RawMessage(`"not an object"`)}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("Parse (-want +got):\n%s", diff)
	}
}

func TestParseDuplicateKeyLastWins(t *testing.T) {
	e, err := Parse([]byte(`{"displayName":"A","displayName":"B","x":1,"x":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.DisplayName != "B" || len(e.Extra) != 1 || string(e.Extra[0].Raw) != "2" {
		t.Errorf("got %+v", e)
	}
}

func TestParseMalformed(t *testing.T) {
	for _, raw := range []string{"", "   ", "null", "[1,2]", `"str"`, "{", `{"a":}`, `{"a":1}{}`, `{"a":1} x`, "\xff"} {
		_, err := Parse([]byte(raw))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) error = %v, want ErrMalformed", raw, err)
		}
	}
}

func TestJobClassRule(t *testing.T) {
	tests := []struct{ name, raw, want string }{
		{"displayName wins", `{"displayName":"Closure (web.php:12)","job":"x","data":{"command":"O:1:\"Y\":0:{}"}}`, "Closure (web.php:12)"},
		{"empty displayName falls to command", `{"displayName":"","job":"x","data":{"command":"O:10:\"App\\Jobs\\X\":0:{}"}}`, `App\Jobs\X`},
		{"non-string displayName ignored", `{"displayName":5,"job":"A@b"}`, "A@b"},
		// PHP's json_decode keeps the last of duplicate keys.
		{"duplicate displayName: the last", `{"displayName":"App\\Jobs\\Harmless","job":"x","displayName":"App\\Jobs\\Real"}`, `App\Jobs\Real`},
		{"duplicate displayName, the last empty", `{"displayName":"App\\Jobs\\Harmless","displayName":"","data":{"command":"O:10:\"App\\Jobs\\X\":0:{}"}}`, `App\Jobs\X`},
		{"encrypted command falls to job", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"eyJpdiI6Ij"}}`, CallQueuedHandler},
		{"string job", `{"job":"App\\Foo@bar","data":{"x":1}}`, `App\Foo@bar`},
		{"nothing", `{"uuid":"x"}`, ""},
		{"not json", `hello`, ""},
		{"empty", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JobClass([]byte(tt.raw)); got != tt.want {
				t.Errorf("JobClass = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestJobClassOnTruncatedHead(t *testing.T) {
	// A payload without displayName (edited, or a future format), cut by the
	// store in the middle of data.command.
	full := `{"uuid":"u","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\ProcessPodcast",` +
		`"command":"O:23:\"App\\Jobs\\ProcessPodcast\":18:{s:5:\"tries\";i:3;}"}}`
	classAt := strings.Index(full, `\"App`)
	for _, n := range []int{classAt + 40, classAt + 30, len(full) - 5} {
		if got := JobClass([]byte(full[:n])); got != `App\Jobs\ProcessPodcast` {
			t.Errorf("JobClass(first %d bytes) = %q", n, got)
		}
	}
	// Cut inside the class name: data.commandName is what is left, and
	// without it the job key.
	if got := JobClass([]byte(full[:classAt+8])); got != `App\Jobs\ProcessPodcast` {
		t.Errorf("JobClass(cut in class) = %q", got)
	}
	noName := strings.Replace(full, `"commandName":"App\\Jobs\\ProcessPodcast",`, "", 1)
	if got := JobClass([]byte(noName[:strings.Index(noName, `\"App`)+8])); got != CallQueuedHandler {
		t.Errorf("JobClass(cut in class, no commandName) = %q", got)
	}

	real := fixture(t, "object_job.json")
	for _, n := range []int{100, 400, 700, 2048} {
		if n > len(real) {
			n = len(real)
		}
		if got := JobClass(real[:n]); got != `App\Jobs\ProcessPodcast` {
			t.Errorf("JobClass(fixture[:%d]) = %q", n, got)
		}
	}
}

func TestClassNeedle(t *testing.T) {
	tests := []struct{ class, want string }{
		{`App\Jobs\ProcessPodcast`, `App\\Jobs\\ProcessPodcast`},
		{`Closure (web/routes.php:12)`, `Closure (web\/routes.php:12)`},
		{`Odd"Name`, `Odd\"Name`},
		{"Ünïcode\\Job", `Ünïcode\\Job`},
		{"tab\there", `tab\there`},
		{"nul\x00", `nul\u0000`},
	}
	for _, tt := range tests {
		if got := ClassNeedle(tt.class); got != tt.want {
			t.Errorf("ClassNeedle(%q) = %q, want %q", tt.class, got, tt.want)
		}
	}
	// The needle must occur in the real payload text, in displayName and command.
	raw := string(fixture(t, "object_job.json"))
	if n := strings.Count(raw, ClassNeedle(`App\Jobs\ProcessPodcast`)); n < 3 {
		t.Errorf("needle occurs %d times in the real payload, want >= 3", n)
	}
}

func TestRetryUntilExpired(t *testing.T) {
	at := int64(1_700_000_000)
	tests := []struct {
		name  string
		until *int64
		now   time.Time
		want  bool
	}{
		{"no retryUntil", nil, time.Unix(at+1000, 0), false},
		{"before", &at, time.Unix(at-1, 0), false},
		{"same second still runs", &at, time.Unix(at, 999_000_000), false},
		{"after", &at, time.Unix(at+1, 0), true},
	}
	for _, tt := range tests {
		e := Envelope{RetryUntil: tt.until}
		if got := e.RetryUntilExpired(tt.now); got != tt.want {
			t.Errorf("%s: RetryUntilExpired = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestKindString(t *testing.T) {
	if Closure.String() != "closure" || Kind(99).String() != "kind(99)" {
		t.Errorf("Kind names: %q %q", Closure.String(), Kind(99).String())
	}
}

func FuzzJobClassAndParse(f *testing.F) {
	for _, name := range []string{"object_job.json", "string_job.json", "encrypted_aes_256_gcm.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"data":{"command":"O:1:\"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = JobClass(raw)
		if _, err := Parse(raw); err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("Parse error does not wrap ErrMalformed: %v", err)
		}
	})
}

// TestParseLaravel13Keys: the keys Laravel 13.31 writes, in its order
// (constructed from the keys observed on a 13.31 worker), are read into
// their fields and none is left in Extra.
func TestParseLaravel13Keys(t *testing.T) {
	raw := `{"uuid":"u","displayName":"App\\Jobs\\TimesOut","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
		`"maxTries":2,"maxExceptions":2,"failOnTimeout":true,"backoff":"1","timeout":30,"retryUntil":null,` +
		`"deleteWhenMissingModels":true,"data":{"commandName":"App\\Jobs\\TimesOut","command":"O:17:\"App\\Jobs\\TimesOut\":0:{}","batchId":null},` +
		`"createdAt":1796040000,"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_key":"s:1:\"k\";"}},"delay":600}`
	e, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if e.DeleteWhenMissingModels == nil || !*e.DeleteWhenMissingModels || e.Delay == nil || *e.Delay != 600 ||
		e.CreatedAt == nil || *e.CreatedAt != 1796040000 || len(e.Extra) != 0 ||
		string(e.LogContext) != `{"data":[],"hidden":{"laravel_unique_job_key":"s:1:\"k\";"}}` {
		t.Errorf("got %+v", e)
	}
	// Before 13 the key is absent, and a plain push's delay is null.
	e, _ = Parse([]byte(`{"uuid":"u","delay":null}`))
	if e.DeleteWhenMissingModels != nil || e.Delay != nil || e.LogContext != nil {
		t.Errorf("absent keys read as %+v", e)
	}
}

func TestDeletesWhenModelMissing(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"uuid":"u","deleteWhenMissingModels":true,"data":{}}`:  true,
		`{"uuid":"u","deleteWhenMissingModels":false,"data":{}}`: false,
		`{"uuid":"u","deleteWhenMissingModels":1}`:               true,
		`{"uuid":"u","data":{"deleteWhenMissingModels":true}}`:   false, // not the top-level key
		`{"uuid":"u"}`: false,
	} {
		if got := DeletesWhenModelMissing([]byte(raw)); got != want {
			t.Errorf("DeletesWhenModelMissing(%s) = %v, want %v", raw, got, want)
		}
	}
}
