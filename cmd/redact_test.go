package cmd

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// showSecrets: a payload key's value, a protected command property's, a
// nested array key's, and one after password= in the exception message.
var showSecrets = []string{"S1-api-token-value", "S2-password-value", "S3-card-number-value", "S4-message-password"}

func phpStr(s string) string { return `s:` + strconv.Itoa(len(s)) + `:"` + s + `";` }

func seedSecrets(t *testing.T, driver string) (string, []int64) {
	t.Helper()
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	command := `O:23:"App\Jobs\ChargeCustomer":3:{` + phpStr("customerId") + `i:7;` + phpStr("\x00*\x00password") + phpStr(showSecrets[1]) +
		phpStr("options") + `a:1:{` + phpStr("card_number") + phpStr(showSecrets[2]) + `}}`
	cmd, _ := json.Marshal(command)
	var fx []sqltest.FailedFixture
	for i := 1; i <= 2; i++ {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		fx = append(fx, sqltest.FailedFixture{UUID: &u, Connection: "database", Queue: "default",
			Payload: `{"uuid":"` + u + `","displayName":"App\\Jobs\\ChargeCustomer","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
				`"api_token":"` + showSecrets[0] + `","data":{"commandName":"App\\Jobs\\ChargeCustomer","command":` + string(cmd) + `}}`,
			Exception: "RuntimeException: charge failed: password=" + showSecrets[3] + " in /app/X.php:1\nStack trace:\n#0 {main}",
			FailedAt:  testNow.Add(-time.Duration(i) * time.Minute).Format("2006-01-02 15:04:05")})
	}
	return sqltest.DSN(s.Endpoint()), sqltest.InsertFailed(t, s, fx...)
}

// TestRedactWalksEveryOutput: with --redact (or JOBTRIAGE_REDACT=1) no
// output path of a read command shows a listed key's value — listings,
// JSON, NDJSON and CSV exports with and without --full, groups, show as
// text and JSON, on a terminal and piped — on every dialect; without it,
// show does (the fixture can leak).
func TestRedactWalksEveryOutput(t *testing.T) {
	for _, driver := range sqltest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			dsn, ids := seedSecrets(t, driver)
			runs := [][]string{
				{"failed"}, {"failed", "--limit", "0"}, {"failed", "--json"}, {"failed", "--json", "--full"},
				{"failed", "--json", "--limit", "0", "--full"}, {"failed", "--ndjson"}, {"failed", "--ndjson", "--full"},
				{"failed", "--csv"}, {"failed", "--group"}, {"failed", "--group", "--json"}, {"failed", "--search", "charge"},
				// Twice: the first builds the signature index, the second
				// reads it; --no-cache scans.
				{"failed", "--group", "--json"}, {"failed", "--group", "--json", "--no-cache"},
			}
			for _, id := range ids {
				ref := strconv.FormatInt(id, 10)
				runs = append(runs, []string{"show", ref}, []string{"show", ref, "--json"})
			}
			runs = append(runs, []string{"show", "00000000-0000-4000-8000-000000000001"})
			for _, how := range []string{"flag", "env"} {
				for _, tty := range []bool{false, true} {
					h := newHarness(t, tty)
					cache := t.TempDir()
					h.f.Getenv = func(k string) string {
						switch {
						case k == "JOBTRIAGE_CACHE_DIR":
							return cache
						case k == "JOBTRIAGE_REDACT" && how == "env":
							return "1"
						}
						return ""
					}
					for _, args := range runs {
						full := append(append([]string{}, args...), "--dsn", dsn)
						if how == "flag" {
							full = append(full, "--redact")
						}
						name := fmt.Sprintf("%s (%s, tty=%v)", strings.Join(args, " "), how, tty)
						if code := h.run(full...); code != ExitOK {
							t.Errorf("%s: exit %d: %s", name, code, h.errOut.String())
						}
						out := h.out.String() + h.errOut.String()
						for _, s := range showSecrets {
							if strings.Contains(out, s) {
								t.Errorf("%s shows %q:\n%.3000s", name, s, out)
							}
						}
						if args[0] == "show" && !strings.Contains(out, "[redacted]") {
							t.Errorf("%s masks nothing:\n%.3000s", name, out)
						}
					}
				}
			}
			h := newHarness(t, false)
			if code := h.run("show", strconv.FormatInt(ids[0], 10), "--json", "--dsn", dsn); code != ExitOK {
				t.Fatal(h.errOut.String())
			}
			for _, s := range showSecrets {
				if !strings.Contains(h.out.String(), s) {
					t.Errorf("without --redact, show hides %q", s)
				}
			}
		})
	}
}
