package redisqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/backendtest"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// RedisAddrEnv names the test server; unset, the local default is used.
const (
	RedisAddrEnv     = "JOBTRIAGE_TEST_REDIS_ADDR"
	defaultRedisAddr = "127.0.0.1:6379"
)

// laravelPop is Illuminate\Queue\LuaScripts::pop(), verbatim (spec §6.2):
// KEYS queue, queue:reserved, queue:notify; ARGV[1] the reservation deadline.
const laravelPop = `
-- Pop the first job off of the queue...
local job = redis.call('lpop', KEYS[1])
local reserved = false

if(job ~= false) then
    -- Increment the attempt count and place job on the reserved queue...
    reserved = cjson.decode(job)
    reserved['attempts'] = reserved['attempts'] + 1
    reserved = cjson.encode(reserved)
    redis.call('zadd', KEYS[2], ARGV[1], reserved)
    redis.call('lpop', KEYS[3])
end

return {job, reserved}
`

// testRetryAfter is the queue connection's retry_after in the pop tests.
const testRetryAfter = 90 * time.Second

func redisAddr() (string, int) {
	addr := os.Getenv(RedisAddrEnv)
	if addr == "" {
		addr = defaultRedisAddr
	}
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	return host, n
}

func randomPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "jobtriage_test_" + hex.EncodeToString(b) + "_"
}

// openTest opens a backend under a fresh random prefix and deletes every
// key under it when the test ends. A server that cannot be reached skips
// the test, or fails it under CI (sqltest.Required).
func openTest(t *testing.T) *Backend {
	t.Helper()
	host, port := redisAddr()
	b, err := Open(context.Background(), Options{Host: host, Port: port, Prefix: randomPrefix()})
	if err != nil {
		if sqltest.Required() {
			t.Fatalf("Redis at %s:%d (%s): %v", host, port, RedisAddrEnv, err)
		}
		t.Skipf("Redis at %s:%d unreachable (set %s): %v", host, port, RedisAddrEnv, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		iter := b.client.Scan(ctx, 0, b.opts.Prefix+"*", 0).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			b.client.Del(ctx, keys...)
		}
		b.Close()
	})
	return b
}

// pop runs Laravel's pop script on queue, as a worker reserves a job.
func pop(t *testing.T, b *Backend, queue string, at time.Time) (job, reserved string) {
	t.Helper()
	k := b.QueueKey(queue)
	res, err := b.client.Eval(context.Background(), laravelPop, []string{k, k + reservedSuffix, k + notifySuffix},
		at.Add(testRetryAfter).Unix()).Slice()
	if err != nil {
		t.Fatalf("Laravel's pop script: %v", err)
	}
	job, _ = res[0].(string)
	reserved, _ = res[1].(string)
	return job, reserved
}

type redisQueue struct{ b *Backend }

func (q redisQueue) Queued(t *testing.T, queue string) [][]byte {
	t.Helper()
	vals, err := q.b.client.LRange(context.Background(), q.b.QueueKey(queue), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out
}

// Consume pops with Laravel's script and deletes the reservation, as the
// worker does when the job succeeded (RedisJob::delete: ZREM of the exact
// reserved string).
func (q redisQueue) Consume(t *testing.T, queue string) {
	t.Helper()
	job, reserved := pop(t, q.b, queue, time.Now())
	if job == "" {
		t.Fatalf("queue %s is empty", queue)
	}
	n, err := q.b.client.ZRem(context.Background(), q.b.QueueKey(queue)+reservedSuffix, reserved).Result()
	if err != nil || n != 1 {
		t.Fatalf("deleting the reserved job: %d, %v", n, err)
	}
}

// Reserve pops with Laravel's script, leaving the job reserved.
func (q redisQueue) Reserve(t *testing.T, queue string) {
	t.Helper()
	if job, _ := pop(t, q.b, queue, time.Now()); job == "" {
		t.Fatalf("queue %s is empty", queue)
	}
}

func TestConformance(t *testing.T) {
	backendtest.Run(t, backendtest.Harness{
		Open: func(t *testing.T) (triage.QueueBackend, backendtest.Queue) {
			b := openTest(t)
			return b, redisQueue{b}
		},
		RemembersConsumed: true,
	})
}

func TestOptionsDefaults(t *testing.T) {
	got, err := Options{}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if w := (Options{Host: DefaultHost, Port: DefaultPort, MarkerTTL: DefaultMarkerTTL, DialTimeout: DefaultDialTimeout}); got != w {
		t.Errorf("resolve(Options{})\n got %+v\nwant %+v", got, w)
	}
}

func expectNoSecret(t *testing.T, msg, secret string) {
	t.Helper()
	for _, form := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), "S3cret"} {
		if strings.Contains(msg, form) {
			t.Errorf("message shows the password (%q): %s", form, msg)
		}
	}
}

func TestTLSClient(t *testing.T) {
	o, err := (Options{Host: "cache.internal", Port: 6390, DB: 1, TLS: true}).resolve()
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(o).(*redis.Client)
	defer c.Close()
	if tc := c.Options().TLSConfig; tc == nil || tc.ServerName != "cache.internal" {
		t.Fatalf("rediss:// client TLS config = %+v, want one verifying cache.internal", tc)
	}
	if got := (&Backend{endpoint: o.endpoint(), opts: o}).Describe(); got != "rediss://cache.internal:6390/1 (prefix )" {
		t.Errorf("Describe = %q", got)
	}
	plain := newClient(Options{Host: "h", Port: 1}).(*redis.Client)
	defer plain.Close()
	if plain.Options().TLSConfig != nil {
		t.Error("a plain connection got a TLS config")
	}
	// TLS against a plain server fails the handshake, and says where.
	host, port := redisAddr()
	_, err = Open(context.Background(), Options{Host: host, Port: port, TLS: true, Password: "Sup3r:S3cret/+pw", DialTimeout: time.Second})
	if err == nil {
		t.Fatal("a TLS connection to a plain Redis port succeeded")
	}
	if !strings.Contains(err.Error(), "rediss://") {
		t.Errorf("error does not name the TLS endpoint: %v", err)
	}
	expectNoSecret(t, err.Error(), "Sup3r:S3cret/+pw")
}

// closedPort returns a local port nothing listens on.
func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestOpenErrorsHideThePassword(t *testing.T) {
	const secret = "Sup3r:S3cret/+pw"
	port := closedPort(t)
	for name, o := range map[string]Options{
		"fields": {Host: "127.0.0.1", Port: port, Username: "app", Password: secret, DialTimeout: time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Open(context.Background(), o)
			if err == nil {
				t.Fatal("Open succeeded on a closed port")
			}
			if !errors.Is(err, triage.ErrUnreachable) {
				t.Errorf("error does not wrap ErrUnreachable: %v", err)
			}
			if !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
				t.Errorf("error does not name the endpoint: %v", err)
			}
			expectNoSecret(t, err.Error(), secret)
		})
	}
	// A server that refuses the password (the test server has none).
	host, p := redisAddr()
	_, err := Open(context.Background(), Options{Host: host, Port: p, Username: "nobody", Password: secret})
	if err == nil {
		t.Skip("the test server accepted the credentials")
	}
	expectNoSecret(t, err.Error(), secret)
}

func TestDescribe(t *testing.T) {
	b := openTest(t)
	host, port := redisAddr()
	want := "redis://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/0 (prefix " + b.opts.Prefix + ")"
	if got := b.Describe(); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

// TestLaravelPopsWhatPushQueued runs Laravel's own pop script on a pushed
// job: it must find the payload verbatim, count the attempt and reserve it.
func TestLaravelPopsWhatPushQueued(t *testing.T) {
	b := openTest(t)
	at := time.Now()
	u := backendtest.NewUUID()
	payload := backendtest.Payload(u, at, 0)
	if _, err := b.Push(context.Background(), []triage.Move{{UUID: u, Queue: "default", Payload: payload}}, at); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	k := b.QueueKey("default")
	if n := b.client.LLen(ctx, k+notifySuffix).Val(); n != 1 {
		t.Errorf(":notify holds %d, want 1", n)
	}
	job, reserved := pop(t, b, "default", at)
	if job != string(payload) {
		t.Fatalf("popped %q, want the pushed bytes", job)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(reserved), &r); err != nil {
		t.Fatalf("reserved JSON %q: %v", reserved, err)
	}
	if r["attempts"] != float64(1) || r["uuid"] != u {
		t.Errorf("reserved job has attempts %v, uuid %v; want 1, %s", r["attempts"], r["uuid"], u)
	}
	members, err := b.client.ZRangeWithScores(ctx, k+reservedSuffix, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 1 || members[0].Member != reserved || int64(members[0].Score) != at.Add(testRetryAfter).Unix() {
		t.Errorf(":reserved = %+v, want the reserved JSON scored at now + retry_after", members)
	}
	if n := b.client.LLen(ctx, k).Val() + b.client.LLen(ctx, k+notifySuffix).Val(); n != 0 {
		t.Errorf("list and :notify still hold %d entries after the pop", n)
	}
}

// TestPopLosesJobsWithoutAttempts shows why Push refuses such payloads:
// Laravel's pop script errors after its LPOP and Redis keeps the LPOP.
func TestPopLosesJobsWithoutAttempts(t *testing.T) {
	b := openTest(t)
	ctx := context.Background()
	k := b.QueueKey("default")
	b.client.RPush(ctx, k, `{"uuid":"x","id":"x"}`)
	k2 := []string{k, k + reservedSuffix, k + notifySuffix}
	if err := b.client.Eval(ctx, laravelPop, k2, time.Now().Unix()).Err(); err == nil {
		t.Fatal("the pop script accepted a payload without attempts")
	}
	if n := b.client.LLen(ctx, k).Val() + b.client.ZCard(ctx, k+reservedSuffix).Val(); n != 0 {
		t.Fatalf("the job survived (%d entries): the refusal may no longer be needed", n)
	}
}

func TestPushRefusesWhatPopWouldLose(t *testing.T) {
	b := openTest(t)
	at := time.Now()
	good := backendtest.NewUUID()
	for name, bad := range map[string]string{
		"no attempts":       `{"uuid":"bad","id":"i"}`,
		"string attempts":   `{"uuid":"bad","id":"i","attempts":"0"}`,
		"fraction attempts": `{"uuid":"bad","id":"i","attempts":0.5}`,
		"null attempts":     `{"uuid":"bad","id":"i","attempts":null}`,
		"later key wins":    `{"uuid":"bad","id":"i","attempts":0,"attempts":"0"}`,
		"no id":             `{"uuid":"bad","attempts":0}`,
		"empty id":          `{"uuid":"bad","id":"","attempts":0}`,
		"not JSON":          `{"uuid":"bad","id":"i","attempts":0`,
		"not an object":     `[0]`,
	} {
		t.Run(name, func(t *testing.T) {
			moves := []triage.Move{
				{UUID: good, Queue: "a", Payload: backendtest.Payload(good, at, 0)},
				{UUID: "bad-" + strings.ReplaceAll(name, " ", "-"), Queue: "b", Payload: []byte(bad)},
			}
			res, err := b.Push(context.Background(), moves, at)
			if err == nil || !errors.Is(err, triage.ErrInvalidInput) {
				t.Fatalf("Push = %+v, %v; want ErrInvalidInput", res, err)
			}
			if !strings.Contains(err.Error(), moves[1].UUID) {
				t.Errorf("error does not name the job: %v", err)
			}
			if res.Pushed != 0 || b.client.LLen(context.Background(), b.QueueKey("a")).Val() != 0 {
				t.Error("a job was pushed although the batch was refused")
			}
		})
	}
}

// TestInterruptedBetweenPipelines cancels after the first pipeline: the
// jobs of that pipeline are queued and marked, a re-run pushes the rest.
func TestInterruptedBetweenPipelines(t *testing.T) {
	b := openTest(t)
	const total, perPipeline = 50, 10
	b.batchJobs = perPipeline
	ctx, cancel := context.WithCancel(context.Background())
	b.afterBatch = func(int) { cancel() }
	at := time.Now()
	moves := make([]triage.Move, total)
	for i := range moves {
		u := backendtest.NewUUID()
		moves[i] = triage.Move{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}
	}
	res, err := b.Push(ctx, moves, at)
	if !errors.Is(err, context.Canceled) || res.Pushed != perPipeline {
		t.Fatalf("interrupted Push = %+v, %v; want %d pushed and context.Canceled", res, err, perPipeline)
	}
	b.afterBatch = nil
	res, err = b.Push(context.Background(), moves, at)
	if err != nil || res.Pushed != total-perPipeline || res.Already != perPipeline {
		t.Fatalf("re-run = %+v, %v", res, err)
	}
	if n := b.client.LLen(context.Background(), b.QueueKey("default")).Val(); n != total {
		t.Fatalf("%d jobs queued, want %d", n, total)
	}
}

// TestScriptCacheFlushed: EVALSHA answers NOSCRIPT after SCRIPT FLUSH (a
// restart, a failover); the jobs then go by EVAL, none lost or doubled.
func TestScriptCacheFlushed(t *testing.T) {
	b := openTest(t)
	b.batchJobs = 3
	at := time.Now()
	var moves []triage.Move
	for range 7 {
		u := backendtest.NewUUID()
		moves = append(moves, triage.Move{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)})
	}
	ctx := context.Background()
	if _, err := b.Push(ctx, moves[:1], at); err != nil {
		t.Fatal(err)
	}
	if err := b.client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := b.Push(ctx, moves, at)
	if err != nil || res.Pushed != len(moves)-1 || res.Already != 1 {
		t.Fatalf("Push after SCRIPT FLUSH = %+v, %v", res, err)
	}
	if n := b.client.LLen(ctx, b.QueueKey("default")).Val(); n != int64(len(moves)) {
		t.Fatalf("%d jobs queued, want %d", n, len(moves))
	}
}

func TestMarkerKeySharesTheQueuesSlot(t *testing.T) {
	cases := []struct{ prefix, queue, want string }{
		{"app_", "default", "app_jobtriage:pushed:U"},
		{"app_", "{default}", "app_jobtriage:pushed:{default}:U"},
		{"app_", "emails{eu}", "app_jobtriage:pushed:{eu}:U"},
		{"{app}_", "default", "{app}_jobtriage:pushed:U"},
		{"{app}_", "{default}", "{app}_jobtriage:pushed:U"},
		{"app_", "{}x", "app_jobtriage:pushed:U"},
	}
	for _, c := range cases {
		b := &Backend{opts: Options{Prefix: c.prefix}}
		got := b.MarkerKey(c.queue, "U")
		if got != c.want {
			t.Errorf("MarkerKey(%q, %q) under %q = %q, want %q", c.queue, "U", c.prefix, got, c.want)
		}
		qt, qok := hashTag(b.QueueKey(c.queue))
		mt, mok := hashTag(got)
		if qok != mok || qt != mt {
			t.Errorf("%q and %q hash differently", b.QueueKey(c.queue), got)
		}
	}
}

// TestClusterQueueKeys: on a cluster a queue name without a hash tag is
// keyed queues:{name}, as Laravel 13.5+ writes it; a tagged name keeps its
// own; outside a cluster nothing changes. The marker shares the slot.
func TestClusterQueueKeys(t *testing.T) {
	cases := []struct {
		cluster       bool
		prefix, queue string
		want          string
	}{
		{true, "app_", "default", "app_queues:{default}"},
		{true, "app_", "{default}", "app_queues:{default}"},
		{true, "app_", "emails{eu}", "app_queues:emails{eu}"},
		{true, "{app}_", "default", "{app}_queues:{default}"},
		{true, "", "{}x", "queues:{{}x}"},
		{false, "app_", "default", "app_queues:default"},
		{false, "app_", "{default}", "app_queues:{default}"},
	}
	for _, c := range cases {
		b := &Backend{opts: Options{Prefix: c.prefix, Cluster: c.cluster}}
		if got := b.QueueKey(c.queue); got != c.want {
			t.Errorf("cluster %v: QueueKey(%q) under %q = %q, want %q", c.cluster, c.queue, c.prefix, got, c.want)
		}
		if !c.cluster {
			continue
		}
		qt, _ := hashTag(b.QueueKey(c.queue))
		mt, _ := hashTag(b.MarkerKey(c.queue, "U"))
		if qt != mt {
			t.Errorf("%q and its marker %q hash differently", b.QueueKey(c.queue), b.MarkerKey(c.queue, "U"))
		}
	}
}

// TestClusterTagsUntaggedQueue pushes an untagged queue in cluster mode
// (on a plain server: the keys are what matters) where a 13.5+ worker pops
// it, and lists it by its bare name.
func TestClusterTagsUntaggedQueue(t *testing.T) {
	b := openTest(t)
	b.opts.Cluster = true // the client stays the single-node one
	ctx := context.Background()
	at := time.Now()
	u := backendtest.NewUUID()
	if _, err := b.Push(ctx, []triage.Move{{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}}, at); err != nil {
		t.Fatal(err)
	}
	if n := b.client.LLen(ctx, b.opts.Prefix+"queues:{default}").Val(); n != 1 {
		t.Errorf("queues:{default} holds %d jobs, want 1", n)
	}
	if n := b.client.Exists(ctx, b.opts.Prefix+"queues:default").Val(); n != 0 {
		t.Error("the untagged key was written")
	}
	if qs, err := b.Queues(ctx); err != nil || len(qs) != 1 || qs[0] != "default" {
		t.Errorf("Queues = %q, %v; want [default]", qs, err)
	}
}

// TestHashTaggedQueue pushes to a "{default}" queue as cluster apps name
// them, and the marker lands in the same slot.
func TestHashTaggedQueue(t *testing.T) {
	b := openTest(t)
	at := time.Now()
	u := backendtest.NewUUID()
	m := triage.Move{UUID: u, Queue: "{default}", Payload: backendtest.Payload(u, at, 0)}
	for want := range 2 {
		res, err := b.Push(context.Background(), []triage.Move{m}, at)
		if err != nil || res.Already != want {
			t.Fatalf("Push #%d = %+v, %v", want+1, res, err)
		}
	}
	ctx := context.Background()
	ttl := b.client.TTL(ctx, b.MarkerKey(m.Queue, u)).Val()
	if ttl <= 0 || ttl > DefaultMarkerTTL {
		t.Errorf("marker TTL = %v, want up to %v", ttl, DefaultMarkerTTL)
	}
	if b.client.ClusterKeySlot(ctx, b.MarkerKey(m.Queue, u)).Val() != b.client.ClusterKeySlot(ctx, b.QueueKey(m.Queue)).Val() {
		t.Error("marker and queue hash to different slots")
	}
}

// TestStatsOfWorkedQueues sets up what workers leave behind: delayed jobs,
// reservations before and after their deadline, a Horizon payload.
func TestStatsOfWorkedQueues(t *testing.T) {
	b := openTest(t)
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	k := b.QueueKey("default")
	b.client.RPush(ctx, k, `{"uuid":"a","id":"a","attempts":0,"pushedAt":"1799999999.25"}`, `{"uuid":"b","id":"b","attempts":0}`)
	b.client.ZAdd(ctx, k+delayedSuffix, redis.Z{Score: float64(now.Unix() + 60), Member: "d"})
	b.client.ZAdd(ctx, k+reservedSuffix,
		redis.Z{Score: float64(now.Unix()), Member: "deadline now"},
		redis.Z{Score: float64(now.Unix() - 1), Member: "expired"},
		redis.Z{Score: float64(now.Unix() + 1), Member: "running"})
	b.client.RPush(ctx, b.QueueKey("bare"), `{"uuid":"c","id":"c","attempts":0}`)
	st, err := b.Stats(ctx, triage.QueueStatsParams{Queues: []string{"nothing", "default", "bare", "default"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := []triage.QueueStats{
		{Queue: "bare", Size: 1, Pending: 1, OldestPendingUnknown: noCreatedAt},
		{Queue: "default", Size: 6, Pending: 2, Delayed: 1, Reserved: 3, Stuck: 2,
			OldestPendingAt: time.Unix(1_799_999_999, int64(250*time.Millisecond))},
		{Queue: "nothing"},
	}
	if len(st) != len(want) {
		t.Fatalf("Stats = %+v", st)
	}
	for i := range want {
		if st[i].Queue != want[i].Queue || st[i].Size != want[i].Size || st[i].Pending != want[i].Pending ||
			st[i].Delayed != want[i].Delayed || st[i].Reserved != want[i].Reserved || st[i].Stuck != want[i].Stuck ||
			!st[i].OldestPendingAt.Equal(want[i].OldestPendingAt) || st[i].OldestPendingUnknown != want[i].OldestPendingUnknown {
			t.Errorf("Stats[%d] = %+v, want %+v", i, st[i], want[i])
		}
	}
}

// throughputJobs is the size of the measured push.
const throughputJobs = 20_000

// TestThroughput measures one Push of many jobs against the test server.
func TestThroughput(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	b := openTest(t)
	at := time.Now()
	moves := make([]triage.Move, throughputJobs)
	var bytes int
	for i := range moves {
		u := backendtest.NewUUID()
		moves[i] = triage.Move{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 1500)}
		bytes += len(moves[i].Payload)
	}
	start := time.Now()
	res, err := b.Push(context.Background(), moves, at)
	took := time.Since(start)
	if err != nil || res.Pushed != throughputJobs {
		t.Fatalf("Push = %+v, %v", res, err)
	}
	start = time.Now()
	res, err = b.Push(context.Background(), moves, at)
	again := time.Since(start)
	if err != nil || res.Already != throughputJobs {
		t.Fatalf("re-run = %+v, %v", res, err)
	}
	t.Logf("%d jobs of %d bytes: pushed in %v (%.0f jobs/s, %.1f MB/s); re-run (all already pushed) in %v (%.0f jobs/s)",
		throughputJobs, bytes/throughputJobs, took.Round(time.Millisecond), throughputJobs/took.Seconds(),
		float64(bytes)/took.Seconds()/1e6, again.Round(time.Millisecond), throughputJobs/again.Seconds())
}

// TestQueuesListsEveryNonEmptyQueue: ready, delayed and reserved jobs each
// make their queue visible; another prefix's queues do not.
func TestQueuesListsEveryNonEmptyQueue(t *testing.T) {
	ctx := context.Background()
	b := openTest(t)
	other := openTest(t)
	c := b.client
	c.RPush(ctx, b.QueueKey("ready"), `{"id":"1","attempts":0}`)
	c.ZAdd(ctx, b.QueueKey("later")+delayedSuffix, redis.Z{Score: 1, Member: `{"id":"2","attempts":0}`})
	c.ZAdd(ctx, b.QueueKey("{tagged}")+reservedSuffix, redis.Z{Score: 1, Member: `{"id":"3","attempts":1}`})
	c.RPush(ctx, other.QueueKey("foreign"), `{"id":"4","attempts":0}`)
	got, err := b.Queues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "later,ready,{tagged}" {
		t.Errorf("queues %v, want later, ready, {tagged}", got)
	}
	if escapeGlob("a*b?[c]\\") != `a\*b\?\[c\]\\` {
		t.Errorf("escapeGlob: %q", escapeGlob("a*b?[c]\\"))
	}
}

// TestWrongTypeQueuePushesNothing: a queue key holding another type fails
// the push before any marker is set, so a re-run (once the key is fixed)
// still queues every job; jobs of the other queues in the pipeline are not
// pushed either.
func TestWrongTypeQueuePushesNothing(t *testing.T) {
	b := openTest(t)
	ctx := context.Background()
	at := time.Now()
	var moves []triage.Move
	for i := range 4 {
		u := backendtest.NewUUID()
		q := "default"
		if i%2 == 1 {
			q = "broken"
		}
		moves = append(moves, triage.Move{UUID: u, Queue: q, Payload: backendtest.Payload(u, at, 0)})
	}
	if err := b.client.Set(ctx, b.QueueKey("broken"), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if res, err := b.Push(ctx, moves, at); err == nil || res.Pushed != 0 {
		t.Fatalf("Push onto a string key = %+v, %v; want an error and nothing pushed", res, err)
	} else if !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("error %q does not name the wrong type", err)
	}
	if n := b.client.Exists(ctx, b.MarkerKey("default", moves[0].UUID), b.MarkerKey("broken", moves[1].UUID)).Val(); n != 0 {
		t.Fatalf("%d markers set by a push that failed", n)
	}
	if n := b.client.LLen(ctx, b.QueueKey("default")).Val(); n != 0 {
		t.Fatalf("%d jobs queued by a push that failed", n)
	}
	if err := b.client.Del(ctx, b.QueueKey("broken")).Err(); err != nil {
		t.Fatal(err)
	}
	if res, err := b.Push(ctx, moves, at); err != nil || res.Pushed != len(moves) {
		t.Fatalf("re-run = %+v, %v", res, err)
	}
}
