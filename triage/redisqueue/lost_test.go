package redisqueue

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/backendtest"
)

// ownRedisServer starts a redis-server of this test's own on a free port
// (the shared one is never stopped), and returns its port and a kill that
// ends it at once, as a crashed or restarted server ends.
func ownRedisServer(t *testing.T) (port int, kill func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skipf("no redis-server here: %v", err)
	}
	port = closedPort(t)
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
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
	for deadline := time.Now().Add(10 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d never answered", port)
		}
	}
	return port, kill
}

// TestServerGoneMidPushIsUnreachable: a Redis server that went away
// mid-retry ended it with a plain error (exit 1), where a database server
// that did was exit 5. A push whose connection breaks, and every call after
// it that cannot connect, is triage.ErrUnreachable with one line saying so;
// the pipelines before it stay pushed.
func TestServerGoneMidPushIsUnreachable(t *testing.T) {
	port, kill := ownRedisServer(t)
	ctx := context.Background()
	b, err := Open(ctx, Options{Host: "127.0.0.1", Port: port, Prefix: randomPrefix(), DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const total, perPipeline = 50, 10
	b.batchJobs = perPipeline
	b.afterBatch = func(int) { kill() }
	at := time.Now()
	moves := make([]triage.Move, total)
	for i := range moves {
		u := backendtest.NewUUID()
		moves[i] = triage.Move{UUID: u, Queue: "default", Payload: backendtest.Payload(u, at, 0)}
	}
	res, err := b.Push(ctx, moves, at)
	if res.Pushed != perPipeline {
		t.Errorf("%d jobs pushed before the server went, want the first pipeline's %d", res.Pushed, perPipeline)
	}
	for name, err := range map[string]error{
		"the push it broke": err,
		"a push after it":   func() error { _, err := b.Push(ctx, moves, at); return err }(),
		"counting after it": func() error {
			_, err := b.Stats(ctx, triage.QueueStatsParams{Queues: []string{"default"}, Now: at})
			return err
		}(),
	} {
		if !errors.Is(err, triage.ErrUnreachable) || !strings.Contains(err.Error(), "lost the connection to the Redis server") ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want ErrUnreachable saying the connection was lost, on one line", name, err)
		}
	}
}

// TestRouteLog: go-redis printed its own line on stderr, unprefixed, when a
// pool could not dial ("redis: … pool.go:770: … failed to dial"). Routed,
// the line reaches the function given, whole and on one line.
func TestRouteLog(t *testing.T) {
	lines := make(chan string, 16)
	RouteLog(func(msg string) {
		select {
		case lines <- msg:
		default:
		}
	})
	port := closedPort(t)
	if _, err := Open(context.Background(), Options{Host: "127.0.0.1", Port: port, DialTimeout: time.Second}); err == nil {
		t.Fatal("Open succeeded on a closed port")
	}
	select {
	case msg := <-lines:
		if !strings.Contains(msg, "failed to dial") || !strings.Contains(msg, strconv.Itoa(port)) || strings.Contains(msg, "\n") {
			t.Errorf("routed line %q, want go-redis's dial failure on one line", msg)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no line reached the routed logger")
	}
}
