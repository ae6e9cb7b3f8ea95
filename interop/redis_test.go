package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/payload"
)

// redisAddrEnv names the Redis server the Redis interop runs use, as in the
// redisqueue tests; unset means the local server CI starts.
const (
	redisAddrEnv     = "JOBTRIAGE_TEST_REDIS_ADDR"
	defaultRedisAddr = "127.0.0.1:6379"
)

// redisQueue is one test's Redis queue: a key prefix no other run uses, so
// runs on one server never see each other's jobs.
type redisQueue struct {
	addr, prefix string
	client       *redis.Client
}

// newRedisQueue picks a fresh prefix on the interop Redis server and deletes
// every key under it when the test ends.
func newRedisQueue(t *testing.T, name string) *redisQueue {
	t.Helper()
	addr := os.Getenv(redisAddrEnv)
	if addr == "" {
		addr = defaultRedisAddr
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		t.Fatalf("interop prerequisite missing: Redis at %s (%s): %v", addr, redisAddrEnv, err)
	}
	q := &redisQueue{addr: addr, client: client,
		prefix: fmt.Sprintf("jobtriage_interop_%s_%d_%d:", name, os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if n, err := q.deleteKeys(ctx); err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", q.prefix, err)
		} else if n > 0 {
			t.Logf("deleted %d Redis keys under %s", n, q.prefix)
		}
		_ = client.Close()
	})
	return q
}

func (q *redisQueue) deleteKeys(ctx context.Context) (int, error) {
	n := 0
	iter := q.client.Scan(ctx, 0, q.prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		if err := q.client.Del(ctx, iter.Val()).Err(); err != nil {
			return n, err
		}
		n++
	}
	return n, iter.Err()
}

// env is what the Laravel app needs to queue on this Redis under this
// prefix (config/queue.php `redis`, config/database.php `redis.default`).
func (q *redisQueue) env() []string {
	host, port, _ := strings.Cut(q.addr, ":")
	if port == "" {
		port = "6379"
	}
	return []string{"QUEUE_CONNECTION=redis", "REDIS_HOST=" + host, "REDIS_PORT=" + port, "REDIS_PREFIX=" + q.prefix}
}

// failOnRedis is failEverything on the redis queue connection, with
// Horizon's payload keys: interop:dispatch-redis queues jobs that are
// released once (Redis's cjson re-encodes them) and then fail, and the
// workers write them to the dialect's failed_jobs.
func failOnRedis(t *testing.T, lv laravelTarget, d dialect) *scenario {
	t.Helper()
	q := newRedisQueue(t, d.name)
	return failScenario(t, lv, d, "interop:dispatch-redis", append(q.env(), "INTEROP_HORIZON_KEYS=1")...)
}

// exportedRow is one element of interop:export-failed's output.
type exportedRow struct {
	ID      int64  `json:"id"`
	UUID    string `json:"uuid"`
	Payload string `json:"payload"`
}

// exportTo writes the scenario's failed_jobs rows to path and reads them back.
func exportTo(t *testing.T, s *scenario, path string) []exportedRow {
	t.Helper()
	s.app.mustArtisan(t, "interop:export-failed", path, "--manifest="+s.manifestPath)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rows []exportedRow
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// triagedJob is a job as failed --json and show --json print it.
type triagedJob struct {
	reportedJob
	Signature string `json:"signature"`
}

// triagedJobs is failed --json: {"schema_version": 1, "jobs": [...], ...}.
type triagedJobs struct {
	Jobs []triagedJob `json:"jobs"`
}

// reportedSignature is one of the "signatures" of failed --group --json.
type reportedSignature struct {
	ID    string `json:"signature"`
	Class string `json:"class"`
	Count int    `json:"count"`
}

// TestRedisReorderedPayloadsAgree: jobs a real Laravel worker released
// once on Redis reach failed_jobs as cjson re-encoded them (keys in hash
// order, Horizon's tags in front, displayName past any fixed head).
// failed, failed --group, show, failed --class and failed --signature must
// agree on class and signature for every one of them, on every database;
// show, failed --tag and retry --tag must read the tags as stored.
func TestRedisReorderedPayloadsAgree(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		for _, d := range dialects(t) {
			t.Run(d.name, func(t *testing.T) {
				t.Parallel()
				s := failOnRedis(t, lv, d)
				path := filepath.Join(s.app.scratch, "rows.json")
				if os.Getenv("JOBTRIAGE_INTEROP_EXPORT") == "1" && lv.version == "8.83" {
					abs, err := filepath.Abs(filepath.Join("..", "testdata", "laravel-rows", "redis-"+d.name+".json"))
					if err != nil {
						t.Fatal(err)
					}
					path = abs
				}
				rows := exportTo(t, s, path)
				checkReordered(t, s, rows)
				checkAgreement(t, bin, s)
				checkTags(t, bin, s, rows)
			})
		}
	})
}

// checkReordered proves the rows are the case the test is about: not in
// PHP's key order, with Horizon's keys, and (for the notifications) with
// displayName behind the first PayloadHeadChars characters.
func checkReordered(t *testing.T, s *scenario, rows []exportedRow) {
	t.Helper()
	if len(rows) != len(s.manifest.Failures) {
		t.Fatalf("exported %d rows, manifest lists %d", len(rows), len(s.manifest.Failures))
	}
	past := 0
	for _, r := range rows {
		var keys []string
		dec := json.NewDecoder(strings.NewReader(r.Payload))
		if _, err := dec.Token(); err != nil {
			t.Fatalf("row %d: payload is not JSON: %v", r.ID, err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatalf("row %d: %v", r.ID, err)
			}
			keys = append(keys, k.(string))
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				t.Fatalf("row %d: %v", r.ID, err)
			}
		}
		if len(keys) < 2 || keys[0] == "uuid" && keys[1] == "displayName" {
			t.Errorf("row %d: keys %v are in PHP's order; the payload was not re-encoded by cjson", r.ID, keys)
		}
		for _, k := range []string{"type", "tags", "pushedAt", "silenced", "id", "attempts"} {
			if !contains(keys, k) {
				t.Errorf("row %d: no %q key in %v", r.ID, k, keys)
			}
		}
		at := len([]rune(r.Payload[:strings.Index(r.Payload, payload.ClassKeys[0])]))
		if at >= triage.PayloadHeadChars {
			past++
		}
		t.Logf("row %d: displayName at character %d of %d; keys %v", r.ID, at, len([]rune(r.Payload)), keys)
	}
	if past == 0 {
		t.Errorf("no row has displayName past the first %d characters; the test no longer covers the defect", triage.PayloadHeadChars)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// checkAgreement asks every command about the rows and compares.
func checkAgreement(t *testing.T, bin jobtriage, s *scenario) {
	t.Helper()
	dsn := s.dialect.dsn
	var listedDoc triagedJobs
	runJSON(t, bin, &listedDoc, "failed", "--json", "--dsn", dsn)
	listed := listedDoc.Jobs
	if len(listed) != len(s.manifest.Failures) {
		t.Fatalf("failed --json lists %d jobs, the worker failed %d", len(listed), len(s.manifest.Failures))
	}
	byUUID := map[string]triagedJob{}
	for _, j := range listed {
		byUUID[j.UUID] = j
	}
	bySignature := map[string][]string{}
	byClass := map[string][]string{}
	for _, want := range s.manifest.Failures {
		got, ok := byUUID[want.UUID]
		if !ok {
			t.Errorf("%s (uuid %s) missing from failed --json", want.Key, want.UUID)
			continue
		}
		wantView := reportedJob{UUID: want.UUID, Connection: "redis", Queue: want.Queue,
			Class: want.Class, ExceptionClass: want.ExceptionClass, ExceptionMessage: want.ExceptionMessage}
		gotView := got.reportedJob
		gotView.RowID, gotView.FailedAt = 0, time.Time{}
		if diff := cmp.Diff(wantView, gotView); diff != "" {
			t.Errorf("%s: failed --json differs from what the worker wrote (-want +got):\n%s", want.Key, diff)
		}
		bySignature[got.Signature] = append(bySignature[got.Signature], got.UUID)
		byClass[got.Class] = append(byClass[got.Class], got.UUID)

		var shown triagedJob
		runJSON(t, bin, &shown, "show", got.UUID, "--json", "--dsn", dsn)
		if shown.Class != got.Class || shown.Signature != got.Signature {
			t.Errorf("%s: show says %s / %s, failed --json says %s / %s", want.Key, shown.Class, shown.Signature, got.Class, got.Signature)
		}
	}

	var groupDoc struct {
		Signatures []reportedSignature `json:"signatures"`
	}
	runJSON(t, bin, &groupDoc, "failed", "--group", "--json", "--limit", "0", "--dsn", dsn)
	groups := groupDoc.Signatures
	if len(groups) != len(bySignature) {
		t.Errorf("failed --group --json: %d signatures, failed --json shows %d", len(groups), len(bySignature))
	}
	for _, g := range groups {
		uuids := bySignature[g.ID]
		if g.Count != len(uuids) {
			t.Errorf("group %s (%s): count %d, failed --json has %d jobs with that signature", g.ID, g.Class, g.Count, len(uuids))
			continue
		}
		if got := byUUID[uuids[0]]; got.Class != g.Class {
			t.Errorf("group %s: class %s, failed --json says %s", g.ID, g.Class, got.Class)
		}
		var matched triagedJobs
		runJSON(t, bin, &matched, "failed", "--signature", g.ID, "--json", "--dsn", dsn)
		if diff := cmp.Diff(sorted(uuids), uuidsOfJobs(matched.Jobs)); diff != "" {
			t.Errorf("failed --signature %s (-failed --json +--signature):\n%s", g.ID, diff)
		}
	}
	for class, uuids := range byClass {
		if class == "" {
			continue // reported above; --class "" would match everything
		}
		short := class[strings.LastIndex(class, `\`)+1:]
		var matched triagedJobs
		runJSON(t, bin, &matched, "failed", "--class", short, "--json", "--dsn", dsn)
		if diff := cmp.Diff(sorted(uuids), uuidsOfJobs(matched.Jobs)); diff != "" {
			t.Errorf("failed --class %s (-failed --json +--class):\n%s", short, diff)
		}
	}
}

// runJSON runs jobtriage and decodes its stdout into v.
func runJSON(t *testing.T, bin jobtriage, v any, args ...string) {
	t.Helper()
	stdout, stderr, err := bin.run(args...)
	if err != nil {
		t.Fatalf("jobtriage %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, stderr, stdout)
	}
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("jobtriage %s: stdout is not the JSON expected: %v\n%s", strings.Join(args, " "), err, stdout)
	}
}

func uuidsOfJobs(js []triagedJob) []string {
	out := make([]string, 0, len(js))
	for _, j := range js {
		out = append(out, j.UUID)
	}
	return sorted(out)
}

func sorted(ss []string) []string {
	out := append([]string{}, ss...)
	sort.Strings(out)
	return out
}

// checkTags: Horizon's tags as the worker left them in failed_jobs. Horizon
// is not packaged in Debian, so these are Horizon's payload keys written by
// Laravel's own Queue::createPayloadUsing hook (the app's
// AppServiceProvider, INTEROP_HORIZON_KEYS), with the explicit tags() of
// Horizon's Tags::for — Horizon's payload shape, not Horizon itself. show
// prints each row's tags; failed --tag selects exactly the rows carrying
// every tag given (a tag with backslashes, which the stored JSON escapes,
// among them); retry --tag re-queues only those, and a real worker runs
// them.
func checkTags(t *testing.T, bin jobtriage, s *scenario, rows []exportedRow) {
	t.Helper()
	dsn := s.dialect.dsn
	tagsOf := map[string][]string{}
	for _, r := range rows {
		var p struct {
			Tags []string `json:"tags"`
		}
		if err := json.Unmarshal([]byte(r.Payload), &p); err != nil || len(p.Tags) == 0 {
			t.Fatalf("row %d: no tags in the stored payload (%v)", r.ID, err)
		}
		tagsOf[r.UUID] = p.Tags
		shown, text := bin.show(t, dsn, r.UUID)
		if diff := cmp.Diff(p.Tags, shown.Envelope.Tags); diff != "" {
			t.Errorf("row %d: show --json tags (-stored +shown):\n%s", r.ID, diff)
		}
		if line := fmt.Sprintf("%-14s %s", "tags", strings.Join(p.Tags, ", ")); !strings.Contains(text, line) {
			t.Errorf("row %d: show does not print %q:\n%s", r.ID, line, text)
		}
	}
	carrying := func(tags []string) []string {
		var out []string
		for uuid, have := range tagsOf {
			all := true
			for _, tag := range tags {
				all = all && contains(have, tag)
			}
			if all {
				out = append(out, uuid)
			}
		}
		return sorted(out)
	}
	for _, sel := range [][]string{
		{"ledger:ACC-7"},
		{`App\Models\Customer:42`},
		{"invoice:INV-2026-0043", "invoice-line:INV-2026-0043:SKU-00037"},
		{"invoice:INV-2026-0042", "ledger:ACC-7"}, // every one: no job has both
		{"ledger:ACC"}, // exactly: a prefix is no tag
	} {
		want := carrying(sel)
		args := []string{"failed", "--json", "--dsn", dsn}
		for _, tag := range sel {
			args = append(args, "--tag", tag)
		}
		var got triagedJobs
		runJSON(t, bin, &got, args...)
		if diff := cmp.Diff(want, uuidsOfJobs(got.Jobs)); diff != "" {
			t.Errorf("failed --tag %v (-stored tags +listed):\n%s", sel, diff)
		}
	}

	const tag = "ledger:ACC-7"
	var retried []expectedFailure
	for _, f := range s.manifest.Failures {
		if contains(tagsOf[f.UUID], tag) {
			retried = append(retried, f)
		}
	}
	if len(retried) == 0 || len(retried) == len(s.manifest.Failures) {
		t.Fatalf("%d of %d jobs carry %s: retry --tag would prove nothing", len(retried), len(s.manifest.Failures), tag)
	}
	s.app.setFlag(t)
	if stdout, stderr, err := bin.runInApp(s.app, "retry", "--tag", tag, "--yes"); err != nil {
		t.Fatalf("retry --tag %s: %v\n%s\n%s", tag, err, stdout, stderr)
	}
	s.app.drain(t)
	checkResults(t, s.app.readResults(t), retried)
	var left []string
	for uuid := range tagsOf {
		if !contains(tagsOf[uuid], tag) {
			left = append(left, uuid)
		}
	}
	if diff := cmp.Diff(sorted(left), reportedUUIDs(bin.failed(t, dsn))); diff != "" {
		t.Errorf("failed_jobs after retry --tag %s (-the untagged +left):\n%s", tag, diff)
	}
}
