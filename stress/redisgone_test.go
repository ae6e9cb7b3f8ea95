package stress

import (
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage/redisqueue/redistest"
)

// redisGoneRows is the backlog of the Redis-gone test: several of retry's
// batches before and after the moment the server goes.
const redisGoneRows = 4000

// ownRedisArgs keep the test's own server's data in dir, in an append-only
// file written at every command: a SIGKILL loses nothing it acknowledged,
// and a restart shows what it held.
func ownRedisArgs(dir string) []string {
	return []string{"--dir", dir, "--appendonly", "yes", "--appendfsync", "always"}
}

// TestRedisGoneMidRetryIsUnreachable: a Redis server that went away
// mid-retry ended it with exit 1 (a database server's is 5), after go-redis
// had printed its own unprefixed "redis: … pool.go:770 …" line on stderr.
// Now it is exit 5 with one line saying the connection was lost, and
// nothing of go-redis's on stderr. Once the server is back, nothing was
// lost or pushed twice, and a re-run finishes the retry.
func TestRedisGoneMidRetryIsUnreachable(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	dataDir := t.TempDir()
	port, kill := redistest.Start(t, 0, ownRedisArgs(dataDir)...)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	r := &redisServer{addr: addr, prefix: "jobtriage_gone:", client: redis.NewClient(&redis.Options{Addr: addr})}
	t.Cleanup(func() { r.client.Close() })
	b := seedRedis(t, "sqlite", redisGoneRows)
	app := laravelApp(t, b.ep, r)

	p := bin.startIn(t, app, "retry", "all", "--yes", "--rate", "2000/s")
	select {
	case <-p.done:
		t.Fatalf("retry ended (%v) before the server went: %s", p.err, p.stderr.String())
	case <-b.afterPushed(r, p.done, redisGoneRows/4, 0):
		kill()
	}
	code := p.wait(t)
	stderr := p.stderr.String()
	t.Logf("retry after the server went: exit %d: %s", code, strings.TrimSpace(stderr))
	if code != 5 {
		t.Errorf("exit %d, want 5", code)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "jobtriage: ") || !strings.Contains(last, "Redis server") {
		t.Errorf("the last line %q does not say the Redis server was lost", last)
	}
	for _, line := range lines {
		if strings.HasPrefix(line, "redis: ") || strings.Contains(line, "pool.go") {
			t.Errorf("go-redis's own line reached stderr: %q", line)
		}
	}

	redistest.Start(t, port, ownRedisArgs(dataDir)...) // back, with what it had acknowledged
	c := b.census(t, r, "after the server went", false)
	if c.inRedis == 0 || c.inRedis == redisGoneRows {
		t.Errorf("%d of %d jobs in Redis: the server did not go mid-retry", c.inRedis, redisGoneRows)
	}
	final := bin.startIn(t, app, "retry", "all", "--yes")
	if code := final.wait(t); code != 0 {
		t.Fatalf("the re-run exited %d: %s", code, final.stderr.String())
	}
	if c := b.census(t, r, "after the re-run", true); c.inRedis != redisGoneRows {
		t.Errorf("after the re-run %d of %d jobs are in Redis", c.inRedis, redisGoneRows)
	}
}
