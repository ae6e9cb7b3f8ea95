package demo

import (
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/signature"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func generate(t *testing.T, opts Options) ([]FailedRow, []JobRow) {
	t.Helper()
	g, err := NewGenerator(opts)
	if err != nil {
		t.Fatal(err)
	}
	var failed []FailedRow
	for {
		r, ok, err := g.NextFailed()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		failed = append(failed, r)
	}
	var jobs []JobRow
	for {
		j, ok, err := g.NextJob()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		jobs = append(jobs, j)
	}
	return failed, jobs
}

func TestRowsParseWithTriagePackages(t *testing.T) {
	rows, _ := generate(t, Options{Failed: 600, Seed: 7, Now: testNow})
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Scenario] = true
		env, err := payload.Parse([]byte(r.Payload))
		if err != nil {
			t.Fatalf("%s: payload.Parse: %v", r.Scenario, err)
		}
		if env.UUID != r.UUID {
			t.Errorf("%s: uuid %q, row has %q", r.Scenario, env.UUID, r.UUID)
		}
		if got := payload.JobClass([]byte(r.Payload)); got != r.Class {
			t.Errorf("%s: JobClass = %q, want %q", r.Scenario, got, r.Class)
		}
		// Listings read only a 2 KB head of the payload.
		if head := r.Payload[:min(len(r.Payload), 2048)]; payload.JobClass([]byte(head)) != r.Class {
			t.Errorf("%s: JobClass on the 2 KB head = %q", r.Scenario, payload.JobClass([]byte(head)))
		}
		if env.Encrypted != r.Encrypted {
			t.Errorf("%s: Encrypted = %v, want %v", r.Scenario, env.Encrypted, r.Encrypted)
		}
		if r.Encrypted {
			plain, err := payload.DecryptCommand(env.Command, DemoAppKey)
			if err != nil {
				t.Fatalf("%s: DecryptCommand: %v", r.Scenario, err)
			}
			if !strings.HasPrefix(plain, `O:27:"App\Jobs\ExportCustomerData":`) {
				t.Errorf("%s: decrypted command starts %q", r.Scenario, plain[:min(len(plain), 60)])
			}
		}
		if top := exception.Parse(r.Exception).Top(); top.Class != r.ExceptionClass {
			t.Errorf("%s: top exception %q, want %q", r.Scenario, top.Class, r.ExceptionClass)
		}
		if cls, _ := exception.Head(r.Exception); cls != r.ExceptionClass {
			t.Errorf("%s: Head class %q, want %q", r.Scenario, cls, r.ExceptionClass)
		}
		if r.Scenario == ScenarioRetryUntil && !env.RetryUntilExpired(r.FailedAt) {
			t.Errorf("retryUntil %v not expired at failed_at %s", env.RetryUntil, r.FailedAt)
		}
	}
	for _, s := range scenarios() {
		if !seen[s.name] {
			t.Errorf("scenario %s never generated in 600 rows", s.name)
		}
	}
}

// Ids vary inside a scenario, but the signature folds them: each scenario
// yields few signatures and many rows share each.
func TestSignaturesFold(t *testing.T) {
	rows, _ := generate(t, Options{Failed: 1000, Seed: 11, Now: testNow})
	sigs := map[string]map[string]bool{}
	messages := map[string]map[string]bool{}
	for _, r := range rows {
		class := payload.JobClass([]byte(r.Payload))
		ec, msg := exception.Head(r.Exception)
		id := signature.ID(class, ec, signature.Normalize(msg))
		if sigs[r.Scenario] == nil {
			sigs[r.Scenario], messages[r.Scenario] = map[string]bool{}, map[string]bool{}
		}
		sigs[r.Scenario][id] = true
		messages[r.Scenario][msg] = true
	}
	for _, name := range []string{ScenarioModelNotFound, ScenarioDeadlock, ScenarioCurlTimeout} {
		if len(messages[name]) < 10 {
			t.Errorf("%s: only %d distinct messages; want varying ids", name, len(messages[name]))
		}
		if len(sigs[name]) > 2 {
			t.Errorf("%s: %d signatures for %d messages; normalisation should fold them", name, len(sigs[name]), len(messages[name]))
		}
	}
}

func TestDeterministic(t *testing.T) {
	a, aj := generate(t, Options{Failed: 50, Jobs: 10, Seed: 42, Now: testNow})
	b, bj := generate(t, Options{Failed: 50, Jobs: 10, Seed: 42, Now: testNow})
	c, _ := generate(t, Options{Failed: 50, Seed: 43, Now: testNow})
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d differs between two runs with the same seed", i)
		}
	}
	for i := range aj {
		if aj[i].Payload != bj[i].Payload || aj[i].AvailableAt != bj[i].AvailableAt {
			t.Fatalf("job %d differs between two runs with the same seed", i)
		}
	}
	if a[0].UUID == c[0].UUID {
		t.Error("a different seed produced the same first uuid")
	}
}

func TestTimelineHasBurstsAndStaysInWindow(t *testing.T) {
	rows, _ := generate(t, Options{Failed: 5000, Seed: 5, Now: testNow})
	start := testNow.Add(-7 * 24 * time.Hour)
	perHour := map[time.Time]int{}
	for i, r := range rows {
		if r.FailedAt.Before(start) || r.FailedAt.After(testNow) {
			t.Fatalf("row %d failed_at %s outside the window", i, r.FailedAt)
		}
		if i > 0 && r.FailedAt.Before(rows[i-1].FailedAt) {
			t.Fatalf("row %d failed_at goes backwards", i)
		}
		if r.FailedAt.Nanosecond() != 0 || r.FailedAt.Location() != time.UTC {
			t.Fatalf("row %d failed_at %v is not whole UTC seconds", i, r.FailedAt)
		}
		perHour[r.FailedAt.Truncate(time.Hour)]++
	}
	var counts []int
	for _, n := range perHour {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	median, peak := counts[len(counts)/2], counts[len(counts)-1]
	if peak < 4*median {
		t.Errorf("peak hour %d vs median %d: want bursts of at least 4x", peak, median)
	}
	if got := rows[0].FailedAtText(); len(got) != 19 || got[10] != ' ' {
		t.Errorf("FailedAtText = %q, want Y-m-d H:i:s", got)
	}
}

func TestSizeKnobs(t *testing.T) {
	for _, tc := range []struct{ payload, exception int }{{2048, 4096}, {8192, 16384}, {0, 2000}} {
		rows, _ := generate(t, Options{Failed: 300, Seed: 9, Now: testNow, PayloadSize: tc.payload, ExceptionSize: tc.exception})
		var p, e int
		for _, r := range rows {
			p += len(r.Payload)
			e += len(r.Exception)
			if tc.payload > 0 && len(r.Payload) < tc.payload {
				t.Errorf("%s: payload %d bytes, below the %d target", r.Scenario, len(r.Payload), tc.payload)
			}
		}
		p, e = p/len(rows), e/len(rows)
		if tc.payload > 0 && (p < tc.payload || p > tc.payload*115/100) {
			t.Errorf("PayloadSize %d: average %d", tc.payload, p)
		}
		if e < tc.exception*80/100 || e > tc.exception*125/100 {
			t.Errorf("ExceptionSize %d: average %d", tc.exception, e)
		}
	}
}

func TestJobsStates(t *testing.T) {
	_, jobs := generate(t, Options{Jobs: 400, Seed: 3, Now: testNow})
	now := testNow.Unix()
	var pending, delayed, reserved, stuck int
	queues := map[string]bool{}
	for _, j := range jobs {
		queues[j.Queue] = true
		if _, err := payload.Parse([]byte(j.Payload)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(j.Payload, `"attempts":`) {
			t.Errorf("database queue payload carries Redis attempts: %s", j.Payload[:80])
		}
		switch {
		case j.ReservedAt != nil:
			reserved++
			if *j.ReservedAt <= now-90 {
				stuck++
			}
			if j.Attempts < 1 {
				t.Error("reserved job with attempts 0")
			}
		case j.AvailableAt > now:
			delayed++
		default:
			pending++
		}
	}
	if pending == 0 || delayed == 0 || reserved == 0 || stuck == 0 || stuck == reserved {
		t.Errorf("pending %d, delayed %d, reserved %d (stuck %d): want every state", pending, delayed, reserved, stuck)
	}
	if len(queues) < 3 {
		t.Errorf("jobs on %d queues, want several", len(queues))
	}
}

func TestConnectionsAndQueues(t *testing.T) {
	rows, _ := generate(t, Options{Failed: 500, Seed: 1, Now: testNow})
	conns, queues := map[string]int{}, map[string]bool{}
	for _, r := range rows {
		conns[r.Connection]++
		queues[r.Queue] = true
		redis := strings.HasSuffix(r.Payload, `,"attempts":0}`) && strings.Contains(r.Payload, `"id":"`)
		if redis != (r.Connection == "redis") {
			t.Errorf("%s on %s: Redis id/attempts keys present = %v", r.Scenario, r.Connection, redis)
		}
	}
	if conns["database"] == 0 || conns["redis"] == 0 || len(queues) != 4 {
		t.Errorf("connections %v, queues %v", conns, queues)
	}
	only, _ := generate(t, Options{Failed: 200, Seed: 1, Now: testNow, Connections: []string{"database"}})
	for _, r := range only {
		if r.Connection != "database" {
			t.Fatalf("Connections filter let %s through", r.Connection)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	for name, o := range map[string]Options{
		"negative rows":    {Failed: -1},
		"negative size":    {PayloadSize: -5},
		"huge size":        {ExceptionSize: 1 << 30},
		"unknown scenario": {Scenarios: []string{"nope"}},
		"empty filter":     {Connections: []string{"sqs"}},
		"jobs w/o db":      {Jobs: 1, Connections: []string{"redis"}},
	} {
		if _, err := NewGenerator(o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestPHPJSONString(t *testing.T) {
	for in, want := range map[string]string{
		`App\Jobs\X`:          `"App\\Jobs\\X"`,
		"a/b":                 `"a\/b"`,
		"\x00*\x00podcastId":  `"\u0000*\u0000podcastId"`,
		"héllo \"q\"":         `"héllo \"q\""`,
		"tab\tnl\ncr\r\x1b":   `"tab\tnl\ncr\r\u001b"`,
		"\u2028\u2029\x7f":    "\"\\u2028\\u2029\x7f\"",
		"bad \xff byte":       "\"bad \uFFFD byte\"",
		"Оплата замовлення #": `"Оплата замовлення #"`,
	} {
		if got := phpJSONString(in); got != want {
			t.Errorf("phpJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestPHPAcceptsRows hands generated payloads to real PHP and Laravel 8.83
// (testdata/oracle.php): each must re-encode byte-for-byte, unserialize, and
// decrypt or verify under the demo key. Skipped where PHP is not installed.
func TestPHPAcceptsRows(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php not installed")
	}
	rows, jobs := generate(t, Options{Failed: 300, Jobs: 30, Seed: 13, Now: testNow, PayloadSize: 2048})
	var in strings.Builder
	var names []string
	add := func(name, p string) {
		b, _ := json.Marshal(map[string]string{"payload": p, "key": DemoAppKey})
		in.Write(b)
		in.WriteByte('\n')
		names = append(names, name)
	}
	for _, r := range rows {
		add(r.Scenario, r.Payload)
	}
	for _, j := range jobs {
		add("job "+j.Scenario, j.Payload)
	}
	cmd := exec.Command("php", "testdata/oracle.php")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(names) {
		t.Fatalf("php answered %d lines for %d rows:\n%s", len(lines), len(names), out)
	}
	for i, l := range lines {
		if l != "ok" {
			t.Errorf("%s: %s", names[i], l)
		}
	}
}
