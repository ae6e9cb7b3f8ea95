package tui

import (
	"errors"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	pl "github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/phpser"
)

// Regenerate with: go test ./tui -run TestGolden -update

const goldenException = `GuzzleHttp\Exception\ConnectException: cURL error 28: Operation timed out after 30001 milliseconds (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) in /srv/app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php:210
Stack trace:
#0 /srv/app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php(158): GuzzleHttp\Handler\CurlFactory::createRejection()
#1 /srv/app/vendor/guzzlehttp/guzzle/src/Handler/CurlHandler.php(47): GuzzleHttp\Handler\CurlFactory::finish()
#2 /srv/app/app/Services/InvoiceClient.php(41): GuzzleHttp\Client->request()
#3 {main}

Next Illuminate\Http\Client\RequestException: HTTP request returned status code 503 in /srv/app/vendor/laravel/framework/src/Illuminate/Http/Client/Response.php:272
Stack trace:
#0 /srv/app/app/Services/InvoiceClient.php(44): Illuminate\Http\Client\Response->throw()
#1 /srv/app/app/Jobs/SyncInvoice.php(38): App\Services\InvoiceClient->push()
#2 /srv/app/vendor/laravel/framework/src/Illuminate/Container/BoundMethod.php(36): App\Jobs\SyncInvoice->handle()
#3 [internal function]: Illuminate\Container\BoundMethod::Illuminate\Container\{closure}()
#4 /srv/app/vendor/laravel/framework/src/Illuminate/Queue/CallQueuedHandler.php(120): Illuminate\Container\Container->call()
#5 {main}`

const goldenCommand = `O:20:"App\Jobs\SyncInvoice":4:{s:9:"invoiceId";i:7731;s:10:"connection";N;s:5:"queue";s:7:"default";s:5:"tries";i:3;}`

func goldenDetail(t *testing.T, j triage.Job) triage.Detail {
	t.Helper()
	payload := `{"uuid":"` + j.UUID + `","displayName":"App\\Jobs\\SyncInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":120,"retryUntil":null,"data":{"commandName":"App\\Jobs\\SyncInvoice","command":` + strconv.Quote(goldenCommand) + `},"attempts":3}`
	v, err := phpser.Decode(goldenCommand)
	if err != nil {
		t.Fatal(err)
	}
	env, err := pl.Parse([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return triage.Detail{Job: j, Payload: []byte(payload), Envelope: env, Exception: goldenException,
		Chain: exception.Parse(goldenException), Command: triage.CommandPlain, CommandText: phpser.FormatWith(v, phpser.FormatOptions{})}
}

func TestGolden(t *testing.T) {
	sizes := [][2]int{{80, 24}, {120, 40}}
	cases := []struct {
		name  string
		setup func(f *fakeBackend)
		keys  []string
		opts  Options
	}{
		{name: "signatures", opts: Options{Connection: "pgsql://forge@db.internal:5432/app", Window: 15 * time.Minute, Threshold: 50}},
		{name: "jobs", keys: []string{"enter", "down"}},
		{name: "detail", keys: []string{"enter", "enter"}},
		{name: "detail_payload", keys: []string{"enter", "enter", "tab"}},
		{name: "detail_command", keys: []string{"enter", "enter", "tab", "tab"}},
		{name: "detail_exception", keys: []string{"enter", "enter", "tab", "tab", "tab"}},
		{name: "detail_json", keys: []string{"enter", "enter", "shift+tab"}},
		{name: "confirm", keys: []string{"r"}, setup: func(f *fakeBackend) { f.counts[sigInvoice] = 1204 }},
		{name: "empty", setup: func(f *fakeBackend) { f.jobs = nil }},
		{name: "error", setup: func(f *fakeBackend) {
			f.groupErr = errors.New(`SQLSTATE[42P01]: Undefined table: 7 ERROR:  relation "failed_jobs" does not exist`)
		}},
		{name: "filter", keys: []string{"/", "5", "0", "3", "tab", "default"}},
		{name: "help", keys: []string{"?"}},
		{name: "readonly", opts: Options{ReadOnly: true, Connection: "sqlite:database/database.sqlite"}},
	}
	for _, tc := range cases {
		for _, size := range sizes {
			t.Run(tc.name+"/"+strconv.Itoa(size[0])+"x"+strconv.Itoa(size[1]), func(t *testing.T) {
				f := seed()
				f.details = map[string]triage.Detail{}
				for _, j := range f.jobs {
					if j.Signature == sigInvoice {
						f.details[j.ID] = goldenDetail(t, j)
					}
				}
				if tc.setup != nil {
					tc.setup(f)
				}
				h := newHarness(t, f, f, tc.opts, size[0], size[1])
				h.keys(tc.keys...)
				golden.RequireEqual(t, []byte(ansi.Strip(h.view())))
			})
		}
	}
}

func TestMain(m *testing.M) {
	// Goldens and teatest output must not depend on the terminal running
	// the tests.
	os.Setenv("NO_COLOR", "1")
	os.Exit(m.Run())
}
