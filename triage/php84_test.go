package triage_test

import (
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

// TestSignatureIgnoresPHPVersion: a Laravel 10+ timeout keeps its class
// and message whatever the trace, and the same TypeError in a closure has
// one signature whether PHP 8.2 ({closure}) or 8.4 ({closure:…}) wrote it.
// (The texts are constructed from what Laravel 13.31 on PHP 8.4 writes.)
func TestSignatureIgnoresPHPVersion(t *testing.T) {
	row := func(exception string) *triage.FailedRow {
		return &triage.FailedRow{ID: 1, UUID: "u", Connection: "database", Queue: "default",
			Payload:   []byte(`{"uuid":"u","displayName":"App\\Jobs\\TimesOut","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\TimesOut","command":"O:17:\"App\\Jobs\\TimesOut\":0:{}"}}`),
			Exception: exception}
	}
	trace := func(closure string) string {
		return "\nStack trace:\n#0 /usr/share/php/Illuminate/Container/Util.php(43): Illuminate\\Container\\BoundMethod::" + closure +
			"()\n#1 {main}"
	}
	timeout := `Illuminate\Queue\TimeoutExceededException: App\Jobs\TimesOut has timed out. in /usr/share/php/Illuminate/Queue/TimeoutExceededException.php:15`
	a := triage.JobFromRow(row(timeout + trace("{closure}")))
	b := triage.JobFromRow(row(timeout + trace("{closure:Illuminate\\Container\\BoundMethod::call():35}")))
	if a.ExceptionClass != `Illuminate\Queue\TimeoutExceededException` || a.ExceptionMessage != `App\Jobs\TimesOut has timed out.` || a.Signature != b.Signature {
		t.Errorf("timeout: %+v / %+v", a, b)
	}
	typeError := func(closure string) string {
		return "TypeError: App\\Jobs\\TimesOut::" + closure + "(): Argument #1 ($id) must be of type int, string given, called in /srv/app/app/Jobs/TimesOut.php on line 20 in /srv/app/app/Jobs/TimesOut.php:12" + trace(closure)
	}
	c := triage.JobFromRow(row(typeError("{closure}")))
	d := triage.JobFromRow(row(typeError("{closure:App\\Jobs\\TimesOut::handle():12}")))
	if c.Signature != d.Signature || !strings.Contains(d.ExceptionMessage, "{closure:") {
		t.Errorf("PHP 8.2 and 8.4 closures: %s %q / %s %q", c.Signature, c.ExceptionMessage, d.Signature, d.ExceptionMessage)
	}
}
