package stress

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage/redisqueue/redistest"
)

// redisFrozenRows is the backlog of the frozen-Redis test: enough batches that
// the freeze lands mid-run, with jobs on both sides of it.
const redisFrozenRows = 20_000

// redisFrozenFor is how long the server is stopped: longer than the client's
// read timeout, shorter than triage.DefaultResolveWait.
const redisFrozenFor = 8 * time.Second

// TestRetryAllToFrozenRedisDoublesNothing stops the test's own Redis
// server (SIGSTOP) mid `retry all` and lets it go on after redisFrozenFor. The
// client times out on a push script the server runs when it wakes: that
// push is in doubt. It used to end the run with those jobs queued and still
// in failed_jobs; now the run pushes them again (each once by its marker)
// until the server answers, and ends with every job queued exactly once and
// none left in failed_jobs.
func TestRetryAllToFrozenRedisDoublesNothing(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	port, _ := redistest.Start(t, 0)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	r := &redisServer{addr: addr, prefix: "jobtriage_frozen:", client: redis.NewClient(&redis.Options{Addr: addr})}
	t.Cleanup(func() { r.client.Close() })
	info, err := r.client.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(info, "process_id:")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if err != nil {
		t.Fatalf("no process_id in INFO server: %v", err)
	}
	b := seedRedis(t, "sqlite", redisFrozenRows)
	app := laravelApp(t, b.ep, r)

	p := bin.startIn(t, app, "retry", "all", "--yes")
	select {
	case <-p.done:
		t.Fatalf("retry ended (%v) before the freeze: %s", p.err, p.stderr.String())
	case <-b.afterPushed(r, p.done, redisFrozenRows/10, 0):
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(redisFrozenFor)
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	}
	code := p.wait(t)
	t.Logf("retry through a %s freeze: exit %d: %s %s", redisFrozenFor, code, strings.TrimSpace(p.stdout.String()), strings.TrimSpace(p.stderr.String()))
	c := b.census(t, r, "after the freeze", false)
	t.Logf("%d of %d jobs in Redis, %d of them still in failed_jobs (doubled)", c.inRedis, redisFrozenRows, c.inBoth)
	if code != 0 || c.inBoth != 0 || c.inRedis != redisFrozenRows {
		t.Errorf("exit %d, %d jobs in Redis, %d in Redis and failed_jobs; want 0, %d, 0", code, c.inRedis, c.inBoth, redisFrozenRows)
	}
}
