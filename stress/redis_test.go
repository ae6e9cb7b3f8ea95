package stress

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// redisSeedRows is the backlog of the Redis crash test: a dozen of retry's
// batches, so progress-timed kills land between batches and inside them.
const redisSeedRows = 12 * triage.WriteBatch

// redisAddrEnv names the Redis server, as in the redisqueue and interop
// tests; unset means the local server CI starts.
const (
	redisAddrEnv     = "JOBTRIAGE_TEST_REDIS_ADDR"
	defaultRedisAddr = "127.0.0.1:6379"
)

// redisConnection is the queue connection (config/queue.php) and the
// failed_jobs.connection value of every row the Redis test seeds.
const redisConnection = "redis"

// queueKeyPart and notifySuffix name RedisQueue's keys under the prefix
// (queue-spec §6.1): the list of ready payloads and its :notify list.
const (
	queueKeyPart = "queues:"
	notifySuffix = ":notify"
)

// redisServer is one test's view of the Redis server under a key prefix no
// other run uses; every key under it is deleted when the test ends.
type redisServer struct {
	addr, prefix string
	client       *redis.Client
}

// newRedisServer connects to the test Redis. An unreachable server fails
// the test under CI and skips it elsewhere, as sqltest does for databases.
func newRedisServer(t *testing.T, name string) *redisServer {
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
		if sqltest.Required() {
			t.Fatalf("Redis at %s is unreachable (%s): %v", addr, redisAddrEnv, err)
		}
		t.Skipf("Redis at %s unreachable (set %s): %v", addr, redisAddrEnv, err)
	}
	r := &redisServer{addr: addr, client: client,
		prefix: fmt.Sprintf("jobtriage_stress_%s_%d_%d:", name, os.Getpid(), time.Now().UnixNano())}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		n, err := r.deleteKeys(ctx)
		if err != nil {
			t.Errorf("cleaning up Redis prefix %s: %v", r.prefix, err)
		}
		t.Logf("deleted %d Redis keys under %s", n, r.prefix)
		_ = client.Close()
	})
	return r
}

func (r *redisServer) deleteKeys(ctx context.Context) (int, error) {
	n := 0
	iter := r.client.Scan(ctx, 0, r.prefix+"*", 1000).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := r.client.Unlink(ctx, batch...).Err()
		n += len(batch)
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == 1000 {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return n, err
	}
	return n, flush()
}

// queueKey is RedisQueue's list of ready jobs of a queue, prefixed as
// phpredis prefixes it.
func (r *redisServer) queueKey(queue string) string { return r.prefix + queueKeyPart + queue }

// pending is the number of jobs in the queues' lists.
func (r *redisServer) pending(ctx context.Context, queues []string) (int, error) {
	pipe := r.client.Pipeline()
	cmds := make([]*redis.IntCmd, len(queues))
	for i, q := range queues {
		cmds[i] = pipe.LLen(ctx, r.queueKey(q))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	n := 0
	for _, c := range cmds {
		n += int(c.Val())
	}
	return n, nil
}

// laravelApp writes the smallest Laravel app whose profile routes the
// redis connection to this Redis prefix and keeps failed_jobs in ep: an
// artisan file (what jobtriage looks for), the 8.x skeleton's
// config/queue.php and config/database.php (reading the usual variables)
// and a .env that sets them. jobtriage is given no --dsn: the profile is
// the only thing that says where anything is.
func laravelApp(t *testing.T, ep sqlstore.Endpoint, r *redisServer) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"artisan": "#!/usr/bin/env php\n<?php\n// jobtriage's stress test app: only its configuration is read.\n",
		"config/queue.php": `<?php

return [
    'default' => env('QUEUE_CONNECTION', 'redis'),
    'connections' => [
        'database' => [
            'driver' => 'database',
            'table' => 'jobs',
            'queue' => 'default',
            'retry_after' => 90,
        ],
        'redis' => [
            'driver' => 'redis',
            'connection' => 'default',
            'queue' => env('REDIS_QUEUE', 'default'),
            'retry_after' => 90,
            'block_for' => null,
        ],
    ],
    'failed' => [
        'driver' => 'database-uuids',
        'database' => env('DB_CONNECTION', 'sqlite'),
        'table' => 'failed_jobs',
    ],
];
`,
		"config/database.php": `<?php

use Illuminate\Support\Str;

return [
    'default' => env('DB_CONNECTION', 'sqlite'),
    'connections' => [
        'sqlite' => [
            'driver' => 'sqlite',
            'database' => env('DB_DATABASE', database_path('database.sqlite')),
            'prefix' => '',
        ],
        'mysql' => [
            'driver' => 'mysql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '3306'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'charset' => 'utf8mb4',
            'collation' => 'utf8mb4_unicode_ci',
            'prefix' => '',
        ],
        'pgsql' => [
            'driver' => 'pgsql',
            'host' => env('DB_HOST', '127.0.0.1'),
            'port' => env('DB_PORT', '5432'),
            'database' => env('DB_DATABASE', 'forge'),
            'username' => env('DB_USERNAME', 'forge'),
            'password' => env('DB_PASSWORD', ''),
            'prefix' => '',
            'schema' => 'public',
            'sslmode' => env('DB_SSLMODE', 'prefer'),
        ],
    ],
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => [
            'cluster' => env('REDIS_CLUSTER', 'redis'),
            'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),
        ],
        'default' => [
            'url' => env('REDIS_URL'),
            'host' => env('REDIS_HOST', '127.0.0.1'),
            'password' => env('REDIS_PASSWORD', null),
            'port' => env('REDIS_PORT', '6379'),
            'database' => env('REDIS_DB', '0'),
        ],
    ],
];
`,
	}
	redisHost, redisPort, _ := strings.Cut(r.addr, ":")
	env := []string{"APP_NAME=stress", "QUEUE_CONNECTION=redis", "REDIS_HOST=" + redisHost, "REDIS_PORT=" + redisPort,
		"REDIS_PREFIX=" + r.prefix}
	switch ep.Driver {
	case "sqlite":
		env = append(env, "DB_CONNECTION=sqlite", "DB_DATABASE="+ep.Path)
	case "postgres", "mysql":
		conn := "mysql"
		if ep.Driver == "postgres" {
			conn = "pgsql"
			sslmode := ep.Params["sslmode"]
			if sslmode == "" {
				sslmode = "disable"
			}
			env = append(env, "DB_SSLMODE="+sslmode)
		}
		env = append(env, "DB_CONNECTION="+conn, "DB_HOST="+ep.Host, "DB_PORT="+strconv.Itoa(ep.Port),
			"DB_DATABASE="+ep.Database, "DB_USERNAME="+ep.User, "DB_PASSWORD="+ep.Password)
	default:
		t.Fatalf("no Laravel connection for driver %q", ep.Driver)
	}
	files[".env"] = strings.Join(env, "\n") + "\n"
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// redisScenarios are demo's failure kinds a retry pushes as they are:
// all but retry-until-expired, whose expired deadline retry skips without
// --retry-until (which would edit the payload beyond attempts).
var redisScenarios = []string{
	demo.ScenarioModelNotFound, demo.ScenarioDeadlock, demo.ScenarioCurlTimeout,
	demo.ScenarioListenerMail, demo.ScenarioNotification, demo.ScenarioClosure,
	demo.ScenarioEncrypted, demo.ScenarioStringJob, demo.ScenarioTimeout,
}

// maxFailedAttempts bounds the "attempts" the seeded payloads carry: a
// Redis job's failed_jobs payload is its reserved JSON, whose attempts the
// pop script incremented, so it is at least 1.
const maxFailedAttempts = 5

// redisIDOf is the RedisQueue "id" (Str::random(32) in form) of the i-th row.
func redisIDOf(i int) string {
	h := sha256.Sum256([]byte("redis-id-" + strconv.Itoa(i)))
	return hex.EncodeToString(h[:16])
}

// redisBacklog is a failed_jobs table of jobs that failed on the redis
// connection, and what each must look like once retried.
type redisBacklog struct {
	*seeded
	queues []string
	// queueOf is each uuid's queue; pushed is the hash of the payload retry
	// must push: the seeded bytes with "attempts" 0.
	queueOf map[string]string
	pushed  map[string][sha256.Size]byte
}

// seedRedis creates the failed_jobs database and inserts n Redis jobs
// under fresh uuids. demo's rows are written as Laravel 8.83 writes
// them; rows of the database connection become Redis rows as RedisQueue
// would have queued them (the same JSON plus "id" and "attempts",
// queue-spec §4.1), and every row carries 1..maxFailedAttempts attempts,
// so a retry that did not reset them is seen.
func seedRedis(t *testing.T, driver string, n int) *redisBacklog {
	t.Helper()
	start := time.Now()
	ctx := context.Background()
	g, err := demo.NewGenerator(demo.Options{Failed: templateRows, Seed: 20261130,
		Scenarios: redisScenarios, ExceptionSize: 600})
	if err != nil {
		t.Fatal(err)
	}
	type template struct {
		uuid, queue, exception, failedAt string
		// base is the payload up to the Redis keys, without the closing
		// brace: a row is base + its id and attempts.
		base string
	}
	var templates []template
	for {
		r, ok, err := g.NextFailed()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if !strings.HasPrefix(r.Payload, `{"uuid":"`+r.UUID+`"`) || !strings.HasSuffix(r.Payload, "}") {
			t.Fatalf("template payload is not a Laravel object payload: %.80s", r.Payload)
		}
		base := strings.TrimSuffix(r.Payload, "}")
		if r.Connection == redisConnection {
			i := strings.LastIndex(base, `,"id":"`)
			if i < 0 || !strings.HasSuffix(base, `,"attempts":0`) {
				t.Fatalf("demo Redis payload does not end with id and attempts: …%s", base[max(0, len(base)-80):])
			}
			base = base[:i]
		}
		templates = append(templates, template{uuid: r.UUID, queue: r.Queue, exception: r.Exception,
			failedAt: r.FailedAtText(), base: base})
	}
	b := &redisBacklog{queueOf: make(map[string]string, n), pushed: make(map[string][sha256.Size]byte, n)}
	payloadOf := func(i int, attempts int) (uuid, queue, payload string) {
		tpl := templates[i%len(templates)]
		uuid = backlogUUID(i)
		payload = strings.Replace(tpl.base, tpl.uuid, uuid, 1) + `,"id":"` + redisIDOf(i) + `","attempts":` + strconv.Itoa(attempts) + "}"
		return uuid, tpl.queue, payload
	}
	queues := map[string]bool{}
	for i := range n {
		uuid, queue, want := payloadOf(i, 0)
		b.queueOf[uuid] = queue
		b.pushed[uuid] = sha256.Sum256([]byte(want))
		queues[queue] = true
	}
	for q := range queues {
		b.queues = append(b.queues, q)
	}
	ep := sqltest.NewEndpoint(t, driver)
	db, err := sqlstore.OpenRaw(ctx, ep)
	if err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqlstore.CreateLaravelSchema(ctx, db, driver, sqlstore.SchemaLaravel8); err != nil {
		t.Fatalf("create Laravel schema on %s: %v", driver, err)
	}
	err = insertGenerated(ctx, db, driver, n, func(i int) []any {
		tpl := templates[i%len(templates)]
		uuid, queue, payload := payloadOf(i, 1+i%maxFailedAttempts)
		return []any{uuid, redisConnection, queue, payload, tpl.exception, tpl.failedAt}
	})
	if err != nil {
		t.Fatalf("seed %d Redis failed jobs on %s: %v", n, driver, err)
	}
	db.SetMaxOpenConns(1) // as seed: sessions() tells the checker from a lingering jobtriage
	b.seeded = &seeded{driver: driver, ep: ep, dsn: sqltest.DSN(ep), db: db}
	var count int
	if err := db.Get(&count, "SELECT COUNT(*) FROM failed_jobs"); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("seeded %d rows, read back %d", n, count)
	}
	t.Logf("seeded %d Redis failed jobs on %s (queues %v) in %s", n, driver, b.queues, time.Since(start).Round(time.Millisecond))
	return b
}

// redisCensus is where the seeded jobs are after a run.
type redisCensus struct {
	inRedis int // uuids in their queue's list
	inBoth  int // uuids in a list and still in failed_jobs
}

// census checks every seeded uuid against failed_jobs and the Redis
// queues: never lost (in neither), never in Redis twice, never in another
// queue than its own, nothing unseeded in either, each pushed payload the
// seeded bytes with "attempts" 0, and one :notify entry per pushed job. A
// uuid may be in both only after a kill between a batch's push and its
// commit (final=false): the next run must then delete it without pushing
// it again. With final, every uuid must be in exactly one place.
//
// jobtriage is not running while the census reads (the caller waited for
// it to exit), so the list and table reads need not be one snapshot.
func (b *redisBacklog) census(t *testing.T, r *redisServer, when string, final bool) redisCensus {
	t.Helper()
	ctx := context.Background()
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		} else if len(problems) == 10 {
			problems = append(problems, "…")
		}
	}
	var failed []string
	if err := b.db.Select(&failed, "SELECT uuid FROM failed_jobs"); err != nil {
		t.Fatalf("%s: read failed_jobs: %v", when, err)
	}
	inFailed := make(map[string]bool, len(failed))
	stray, lost, doubled, both, changed, misqueued := 0, 0, 0, 0, 0, 0
	for _, u := range failed {
		if _, ok := b.pushed[u]; !ok || inFailed[u] {
			stray++
			problem("failed_jobs holds %s, which was not seeded once", u)
		}
		inFailed[u] = true
	}
	inRedis := make(map[string]bool, len(b.pushed))
	for _, q := range b.queues {
		key := r.queueKey(q)
		list, err := r.client.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatalf("%s: LRANGE %s: %v", when, key, err)
		}
		notify, err := r.client.LLen(ctx, key+notifySuffix).Result()
		if err != nil {
			t.Fatalf("%s: LLEN %s%s: %v", when, key, notifySuffix, err)
		}
		if int(notify) != len(list) {
			problem("%s holds %d jobs but its %s list %d entries", key, len(list), notifySuffix, notify)
			stray++
		}
		for _, payload := range list {
			u := jsonUUID([]byte(payload))
			want, ok := b.pushed[u]
			switch {
			case !ok:
				stray++
				problem("%s holds a job that was never seeded: %.80s", key, payload)
				continue
			case inRedis[u]:
				doubled++
				problem("%s was pushed twice", u)
				continue
			case b.queueOf[u] != q:
				misqueued++
				problem("%s was pushed to queue %s, not its own %s", u, q, b.queueOf[u])
			case sha256.Sum256([]byte(payload)) != want:
				changed++
				problem("the pushed payload of %s is not the seeded one with attempts 0: …%s", u, payload[max(0, len(payload)-120):])
			}
			inRedis[u] = true
			if inFailed[u] {
				both++
			}
		}
	}
	for u := range b.pushed {
		if !inRedis[u] && !inFailed[u] {
			lost++
			problem("%s is in neither failed_jobs nor Redis", u)
		}
	}
	if final && both > 0 {
		problem("%d jobs are in Redis and still in failed_jobs after the final run", both)
	}
	if lost+doubled+stray+changed+misqueued > 0 || (final && both > 0) {
		t.Fatalf("%s: %d lost, %d pushed twice, %d stray, %d changed, %d on another queue, %d in both:\n  %s",
			when, lost, doubled, stray, changed, misqueued, both, strings.Join(problems, "\n  "))
	}
	return redisCensus{inRedis: len(inRedis), inBoth: both}
}

// afterPushed fires extra after the queues hold at least target jobs,
// polling while the run lasts; it never fires if the run ends first.
func (b *redisBacklog) afterPushed(r *redisServer, done <-chan struct{}, target int, extra time.Duration) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			n, err := r.pending(context.Background(), b.queues)
			if err != nil {
				continue
			}
			if n >= target {
				time.Sleep(extra)
				fire <- time.Now()
				return
			}
		}
	}()
	return fire
}

// TestRetryAllToRedisSurvivesSIGKILL is TestRetryAllSurvivesSIGKILL for
// jobs that failed on a Redis queue connection, run inside a Laravel app
// whose profile routes them: retry pushes each batch to Redis first (a
// marker per uuid, set by the push script) and commits the batch's delete
// from failed_jobs second. It kills the run at random moments, mostly once
// a random share of the backlog has reached Redis, and checks after every
// kill that no job is lost or pushed twice; a kill between a batch's push
// and its commit leaves jobs in both, which the next run must delete
// without pushing them again. A final run completes, and then every job is
// in its queue's list exactly once, its payload byte for byte as seeded
// but for attempts 0, with one :notify entry each.
func TestRetryAllToRedisSurvivesSIGKILL(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	base := rngSeed(t)
	t.Logf("kill schedule seed %d (replay with %s=%d)", base, seedEnv, base)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			r := newRedisServer(t, driver)
			b := seedRedis(t, driver, redisSeedRows)
			app := laravelApp(t, b.ep, r)
			rng := rand.New(rand.NewPCG(base, streamOf("redis/"+driver)))
			kills := 5 + rng.IntN(4)
			midRun, inWindow := 0, 0
			var c redisCensus
			for i := 1; i <= kills; i++ {
				var when string
				var fire <-chan time.Time
				p := bin.startIn(t, app, "retry", "all", "--yes")
				// Once every job has reached Redis (the last batch's delete
				// is what a kill interrupted), progress cannot be watched
				// in the lists: the clock times the kill.
				if rng.IntN(4) == 0 || c.inRedis == redisSeedRows {
					delay := 10*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
					when, fire = delay.String()+" into the run", time.After(delay)
				} else {
					target := c.inRedis + 1 + rng.IntN(max(1, (redisSeedRows-c.inRedis)*9/10))
					extra := time.Duration(rng.Int64N(int64(20 * time.Millisecond)))
					when = fmt.Sprintf("%s after %d jobs were in Redis", extra, target)
					fire = b.afterPushed(r, p.done, target, extra)
				}
				killed := false
				select {
				case <-p.done:
				case <-fire:
					killed = p.cmd.Process.Kill() == nil // SIGKILL
					<-p.done
				}
				if !killed {
					if code := exitCode(t, p.err); code != 0 {
						t.Fatalf("run %d exited %d before its kill: %s", i, code, p.stderr.String())
					}
				}
				b.awaitNoSessions(t)
				before := c.inRedis
				c = b.census(t, r, fmt.Sprintf("after kill %d (%s)", i, when), false)
				if killed && c.inRedis > before && c.inRedis < redisSeedRows {
					midRun++
				}
				if killed && c.inBoth > 0 {
					inWindow++
				}
				t.Logf("kill %d, %s: killed=%v, %d of %d jobs in Redis, %d of them still in failed_jobs",
					i, when, killed, c.inRedis, redisSeedRows, c.inBoth)
			}
			final := time.Now()
			p := bin.startIn(t, app, "retry", "all", "--yes")
			if code := p.wait(t); code != 0 {
				t.Fatalf("final retry exited %d: %s", code, p.stderr.String())
			}
			t.Logf("final run took %s: %s", time.Since(final).Round(time.Millisecond), strings.TrimSpace(p.stdout.String()))
			if c = b.census(t, r, "after the final run", true); c.inRedis != redisSeedRows {
				t.Fatalf("after the final run %d of %d jobs are in Redis, the rest still in failed_jobs", c.inRedis, redisSeedRows)
			}
			if midRun == 0 {
				t.Errorf("no kill landed while part of the backlog was in Redis; the schedule (seed %d) proved nothing", base)
			}
			t.Logf("%s: %d kills, %d mid-run, %d between a push and its commit, total %s",
				driver, kills, midRun, inWindow, time.Since(start).Round(time.Millisecond))
		})
	}
}

// jobsDSNRows is the backlog of the --jobs-dsn test: a few of retry's
// batches before and after the kill.
const jobsDSNRows = 10_000

// pushDeleteWindow is how long a deferred trigger holds the COMMIT of a
// batch's failed_jobs deletes, which retry makes after that batch was
// pushed to (and committed in) the other database: it widens the window
// between push and delete from milliseconds to one a kill can be aimed at.
// It changes when the delete commits, not what retry does.
const pushDeleteWindow = 300 * time.Millisecond

// TestRetryJobsDSNKilledBetweenPushAndDelete covers --jobs-dsn, the jobs
// table in another database: failed_jobs on PostgreSQL, jobs on MariaDB.
// Each batch is pushed there and committed first, then deleted from
// failed_jobs. The test kills retry between the two, lets a worker consume
// every queued job (deletes the jobs rows), and completes the retry:
//   - with --jobs-ledger the push skips the uuids it recorded, so the jobs
//     the worker ran are not queued again;
//   - without it the push only skips uuids still waiting in jobs, so the
//     jobs pushed before the kill and run since are queued a second time:
//     the window the README and JobsBackend document. The test asserts it,
//     so that neither case can pass without the kill landing in the window.
func TestRetryJobsDSNKilledBetweenPushAndDelete(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	base := rngSeed(t)
	t.Logf("kill schedule seed %d (replay with %s=%d)", base, seedEnv, base)
	for _, ledger := range []bool{true, false} {
		name := "ledger"
		if !ledger {
			name = "no-ledger"
		}
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			ctx := context.Background()
			s := seed(t, "postgres", jobsDSNRows)
			jep := sqltest.NewEndpoint(t, "mysql")
			jdb, err := sqlstore.OpenRaw(ctx, jep)
			if err != nil {
				t.Fatalf("open the jobs database: %v", err)
			}
			t.Cleanup(func() { jdb.Close() })
			if err := sqlstore.CreateLaravelSchema(ctx, jdb, "mysql", sqlstore.SchemaLaravel8); err != nil {
				t.Fatalf("create the jobs table: %v", err)
			}
			// Deferred, the trigger runs at COMMIT, once per transaction
			// (the transaction-local setting), after the batch's push.
			slow := fmt.Sprintf(`CREATE FUNCTION stress_hold_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF current_setting('stress.held', true) IS DISTINCT FROM 'yes' THEN
PERFORM set_config('stress.held', 'yes', true); PERFORM pg_sleep(%g); END IF; RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER stress_hold_delete AFTER DELETE ON failed_jobs DEFERRABLE INITIALLY DEFERRED
FOR EACH ROW EXECUTE FUNCTION stress_hold_delete();`,
				pushDeleteWindow.Seconds())
			if _, err := s.db.ExecContext(ctx, slow); err != nil {
				t.Fatalf("install the delete-holding trigger: %v", err)
			}
			args := []string{"retry", "all", "--yes", "--dsn", s.dsn, "--jobs-dsn", sqltest.DSN(jep)}
			if ledger {
				args = append(args, "--jobs-ledger")
			}
			rng := rand.New(rand.NewPCG(base, streamOf("jobs-dsn/"+name)))
			// Aim at the window after one of the first half's batches.
			target := 1 + rng.IntN(jobsDSNRows/2)
			extra := time.Duration(rng.Int64N(int64(pushDeleteWindow / 2)))
			p := bin.start(t, args...)
			fire := afterJobs(jdb, p.done, target, extra)
			select {
			case <-p.done:
				t.Fatalf("retry ended before its kill (exit %v): %s", p.err, p.stderr.String())
			case <-fire:
				_ = p.cmd.Process.Kill() // SIGKILL
				<-p.done
			}
			// A server that has the COMMIT finishes it after its client
			// died; the crash this stands for is the whole process gone
			// before the COMMIT, so the sessions it left are ended too.
			if _, err := s.db.ExecContext(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"); err != nil {
				t.Fatal(err)
			}
			s.awaitNoSessions(t)
			failed := uuidSet(t, s.db.DB, "SELECT uuid FROM failed_jobs")
			queued := jobsUUIDs(t, jdb)
			var window []string
			for u := range queued {
				if failed[u] {
					window = append(window, u)
				}
			}
			for u := range s.payloads {
				if !failed[u] && !queued[u] {
					t.Fatalf("after the kill %s is in neither database", u)
				}
			}
			t.Logf("killed %s after %d jobs were queued: %d in jobs, %d still in failed_jobs, %d in both",
				extra, target, len(queued), len(failed), len(window))
			if len(window) == 0 {
				t.Fatalf("the kill (%s after %d jobs were queued, seed %d) missed the window between a push and its delete", extra, target, base)
			}
			// A worker runs every queued job: Laravel deletes each row.
			if _, err := jdb.ExecContext(ctx, "DELETE FROM jobs"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.ExecContext(ctx, "DROP TRIGGER stress_hold_delete ON failed_jobs"); err != nil {
				t.Fatal(err)
			}
			p = bin.start(t, args...)
			if code := p.wait(t); code != 0 {
				t.Fatalf("the completing retry exited %d: %s", code, p.stderr.String())
			}
			t.Logf("completing run: %s", strings.TrimSpace(p.stdout.String()))
			if left := uuidSet(t, s.db.DB, "SELECT uuid FROM failed_jobs"); len(left) > 0 {
				t.Fatalf("%d jobs are still in failed_jobs after the completing run", len(left))
			}
			final := jobsUUIDs(t, jdb)
			requeued := 0
			for u := range s.payloads {
				want := !queued[u] // not consumed by the worker
				if failed[u] && queued[u] && !ledger {
					want = true // the documented window: queued again
				}
				if final[u] != want {
					t.Errorf("%s: in jobs after the completing run = %v, want %v (queued before the kill %v, still in failed_jobs %v)",
						u, final[u], want, queued[u], failed[u])
				}
				if final[u] && queued[u] {
					requeued++
				}
			}
			payloadsIntactIn(t, jdb.DB, s)
			if ledger {
				t.Logf("ledger: %d jobs consumed after the kill, %d of them pushed but not yet deleted; %d queued again (want 0); total %s",
					len(queued), len(window), requeued, time.Since(start).Round(time.Millisecond))
			} else {
				t.Logf("no ledger: %d jobs consumed after the kill; the %d pushed but not yet deleted were queued again, as documented; total %s",
					len(queued), requeued, time.Since(start).Round(time.Millisecond))
			}
		})
	}
}

// afterJobs fires extra after jobs holds at least target rows, polling
// while the run lasts; it never fires if the run ends first.
func afterJobs(db *sqlx.DB, done <-chan struct{}, target int, extra time.Duration) <-chan time.Time {
	fire := make(chan time.Time, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
			var n int
			if err := db.Get(&n, "SELECT COUNT(*) FROM jobs"); err != nil {
				continue
			}
			if n >= target {
				time.Sleep(extra)
				fire <- time.Now()
				return
			}
		}
	}()
	return fire
}

// uuidSet reads the uuids q returns.
func uuidSet(t *testing.T, db *sql.DB, q string) map[string]bool {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	set := map[string]bool{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		if set[u] {
			t.Fatalf("%s: %s appears twice", q, u)
		}
		set[u] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return set
}

// jobsUUIDs is the uuid of every jobs row on MariaDB; a uuid queued twice
// fails the test.
func jobsUUIDs(t *testing.T, db *sqlx.DB) map[string]bool {
	t.Helper()
	return uuidSet(t, db.DB, "SELECT JSON_UNQUOTE(JSON_EXTRACT(payload, '$.uuid')) FROM jobs")
}

// payloadsIntactIn checks that every jobs row in db carries the payload s
// seeded for its uuid, byte for byte, and was pushed as pushRaw pushes.
func payloadsIntactIn(t *testing.T, db *sql.DB, s *seeded) {
	t.Helper()
	var pending int
	if err := db.QueryRow("SELECT COUNT(*) FROM jobs WHERE attempts <> 0 OR reserved_at IS NOT NULL").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d queued jobs have attempts <> 0 or a reserved_at", pending)
	}
	rows, err := db.Query("SELECT payload FROM jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	changed := 0
	for rows.Next() {
		var payload []byte
		if err := rows.Scan(&payload); err != nil {
			t.Fatal(err)
		}
		if want, ok := s.payloads[jsonUUID(payload)]; !ok || want != sha256.Sum256(payload) {
			changed++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if changed > 0 {
		t.Fatalf("%d queued payloads differ from what was seeded", changed)
	}
}
