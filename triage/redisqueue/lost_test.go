package redisqueue

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/backendtest"
	"github.com/jobtriage/jobtriage/triage/redisqueue/redistest"
)

// TestServerGoneMidPushIsUnreachable: a Redis server that went away
// mid-retry ended it with a plain error (exit 1), where a database server
// that did was exit 5. A push whose connection breaks, and every call after
// it that cannot connect, is triage.ErrUnreachable with one line saying so;
// the pipelines before it stay pushed.
func TestServerGoneMidPushIsUnreachable(t *testing.T) {
	port, kill := redistest.Start(t, 0)
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

// TestRealClusterPushesTaggedAndUntaggedQueues: one retry over a Redis
// Cluster's queues, some named with a hash tag and some without, once
// refused them all. On a real (one-node) cluster every queue's jobs are
// pushed in one call, each script's keys in one slot (no CROSSSLOT), the
// untagged queues under Laravel 13.5's {name} keys; a re-run pushes none
// twice.
func TestRealClusterPushesTaggedAndUntaggedQueues(t *testing.T) {
	port, _ := redistest.Start(t, 0, "--cluster-enabled", "yes")
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer admin.Close()
	if err := admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		t.Skipf("cannot make a one-node cluster: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(admin.ClusterInfo(ctx).Val(), "cluster_state:ok"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the one-node cluster never came up")
		}
	}
	b, err := Open(ctx, Options{Host: "127.0.0.1", Port: port, Cluster: true, Prefix: "app_database_"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	at := time.Now()
	queues := []string{"default", "{payments}", "emails", "reports{eu}"}
	var moves []triage.Move
	for i := range 12 {
		u := backendtest.NewUUID()
		moves = append(moves, triage.Move{UUID: u, Queue: queues[i%len(queues)], Payload: backendtest.Payload(u, at, 0)})
	}
	for run, want := range []triage.PushResult{{Pushed: 12}, {Already: 12}} {
		res, err := b.Push(ctx, moves, at)
		if err != nil || res != want {
			t.Fatalf("push %d: %+v, %v; want %+v", run+1, res, err, want)
		}
	}
	for key, want := range map[string]int64{"app_database_queues:{default}": 3, "app_database_queues:{payments}": 3,
		"app_database_queues:{emails}": 3, "app_database_queues:reports{eu}": 3} {
		if n := admin.LLen(ctx, key).Val(); n != want {
			t.Errorf("%s holds %d jobs, want %d", key, n, want)
		}
	}
}
