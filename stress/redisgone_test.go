package stress

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisGoneRows is the backlog of the Redis-gone test: several of retry's
// batches before and after the moment the server goes.
const redisGoneRows = 4000

// ownRedis runs a redis-server of the test's own on port, its data in dir
// in an append-only file written at every command (so a SIGKILL loses
// nothing acknowledged, and a restart shows what the server held), and
// returns a kill that ends it at once. The shared server is never touched.
func ownRedis(t *testing.T, dir string, port int) (kill func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		skipUnlessRequired(t, "no redis-server here: %v", err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
		"--appendonly", "yes", "--appendfsync", "always")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	kill = func() {
		_ = cmd.Process.Kill()
		<-done
	}
	t.Cleanup(kill)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), MaxRetries: -1})
	defer c.Close()
	for deadline := time.Now().Add(20 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d never answered", port)
		}
	}
	return kill
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dataDir := t.TempDir()
	kill := ownRedis(t, dataDir, port)
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

	ownRedis(t, dataDir, port) // the server is back, with what it had acknowledged
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
