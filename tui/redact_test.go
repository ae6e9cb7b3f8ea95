package tui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

var tuiSecrets = []string{"S1-api-token-value", "S2-password-value", "S3-message-password"}

func secretService(t *testing.T, keys *redact.Keys) *triage.Service {
	t.Helper()
	store := sqltest.OpenLaravel(t, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
	str := func(s string) string { return `s:` + strconv.Itoa(len(s)) + `:"` + s + `";` }
	ser := `O:20:"App\Jobs\SyncInvoice":2:{` + str("invoiceId") + `i:7;` + str("\x00*\x00password") + str(tuiSecrets[1]) + `}`
	u := "5c0e0000-1111-4222-8333-000000000001"
	payload := `{"uuid":"` + u + `","displayName":"App\\Jobs\\SyncInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call","api_token":"` +
		tuiSecrets[0] + `","data":{"commandName":"App\\Jobs\\SyncInvoice","command":` + strconv.Quote(ser) + `}}`
	sqltest.InsertFailed(t, store, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default", Payload: payload,
		Exception: "RuntimeException: login failed: password=" + tuiSecrets[2] + " in /srv/app/app/Jobs/X.php:10\nStack trace:\n#0 {main}",
		FailedAt:  clock.Add(-time.Minute).Format("2006-01-02 15:04:05")})
	return &triage.Service{Store: store, Now: fixedNow, Location: time.UTC, Redact: keys}
}

// TestRedactedScreens: with the service's redaction on, no screen — the
// signatures, a signature's jobs, and each tab of a job's detail — shows a
// listed key's value; with it off, the same screens do.
func TestRedactedScreens(t *testing.T) {
	screens := func(svc *triage.Service) map[string]string {
		h := newHarness(t, svc, nil, Options{}, 200, 120)
		out := map[string]string{"signatures": h.view()}
		h.keys("enter")
		out["jobs"] = h.view()
		h.keys("enter")
		out["detail"] = h.view()
		h.keys("tab")
		out["exception"] = h.view()
		h.keys("tab")
		out["payload"] = h.view()
		return out
	}
	keys := redact.DefaultKeys()
	all := ""
	for name, v := range screens(secretService(t, &keys)) {
		all += v
		for _, s := range tuiSecrets {
			if strings.Contains(v, s) {
				t.Errorf("%s screen shows %q:\n%s", name, s, v)
			}
		}
	}
	if strings.Count(all, redact.Redacted) < len(tuiSecrets) {
		t.Errorf("the screens mask too little:\n%s", all)
	}
	all = ""
	for _, v := range screens(secretService(t, nil)) {
		all += v
	}
	for _, s := range tuiSecrets {
		if !strings.Contains(all, s) {
			t.Errorf("without redaction no screen shows %q: the walk misses a screen", s)
		}
	}
}
