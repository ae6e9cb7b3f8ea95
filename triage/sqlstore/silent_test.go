package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
	"github.com/jobtriage/jobtriage/triage/triagetest"
)

// relay is a TCP proxy in front of a database server that a test can
// freeze (every byte either way is held: the server stops answering, as a
// frozen host or a dead network path does) or cut (every connection is
// closed and no new one is accepted: the server went away).
type relay struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	frozen bool
	conns  []net.Conn
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	go r.serve()
	t.Cleanup(func() {
		r.mu.Lock()
		r.frozen = false
		r.mu.Unlock()
		r.cut()
	})
	return r
}

func (r *relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", r.target)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		r.conns = append(r.conns, c, s)
		r.mu.Unlock()
		go r.pipe(s, c)
		go r.pipe(c, s)
	}
}

// pipe copies src to dst, holding what it read while the relay is frozen.
func (r *relay) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for n > 0 && r.isFrozen() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

func (r *relay) isFrozen() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frozen
}

func (r *relay) freeze() {
	r.mu.Lock()
	r.frozen = true
	r.mu.Unlock()
}

func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
}

// TestServerThatStopsAnsweringIsUnreachable: a MySQL/MariaDB server that
// stopped answering mid-command ended the command with the driver's
// "invalid connection" as a plain error (exit 1), and a server that went
// away did the same on both servers. Both are triage.ErrUnreachable (exit
// 5); the silence is named as such, after the statement timeout plus the
// margin.
func TestServerThatStopsAnsweringIsUnreachable(t *testing.T) {
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) { testLostServer(t, driver) })
	}
}

func testLostServer(t *testing.T, driver string) {
	ep := sqltest.LaravelEndpoint(t, driver, sqlstore.SchemaLaravel8)
	ctx := context.Background()

	const timeout = 200 * time.Millisecond
	open := func(t *testing.T, r *relay) *sqlstore.Store {
		t.Helper()
		via := ep
		via.Host, via.Port, via.Socket = "127.0.0.1", r.port(), ""
		s, err := sqlstore.Open(ctx, sqlstore.Config{Endpoint: via, StatementTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		uuid := fmt.Sprintf("00000000-0000-4000-8000-%012d", r.port())
		sqltest.InsertFailed(t, s, sqltest.FailedFixture{UUID: &uuid, Connection: "database", Queue: "default",
			Payload:   `{"displayName":"App\\Jobs\\A","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{}}`,
			Exception: "RuntimeException: boom", FailedAt: "2026-12-01 06:00:00"})
		return s
	}
	target := func() string {
		host, port := ep.Host, ep.Port
		if host == "" || host == "localhost" {
			host = "127.0.0.1"
		}
		if port == 0 {
			port = map[string]int{"postgres": 5432, "mysql": 3306}[driver]
		}
		return net.JoinHostPort(host, strconv.Itoa(port))
	}()
	calls := map[string]func(*sqlstore.Store) error{
		"count": func(s *sqlstore.Store) error { _, err := s.Count(ctx, triage.Filter{}); return err },
		"scan": func(s *sqlstore.Store) error {
			return s.ScanFailed(ctx, triage.ScanParams{Limit: 10}, func(*triage.FailedRow) error { return nil })
		},
		"forget": func(s *sqlstore.Store) error {
			_, err := triagetest.DeleteBatch(ctx, s, triage.BatchParams{Limit: 10, Now: time.Now()}, func(*triage.FailedRow) bool { return true }, nil)
			return err
		},
	}
	for name, call := range calls {
		t.Run("silent/"+name, func(t *testing.T) {
			t.Parallel()
			r := startRelay(t, target)
			s := open(t, r)
			r.freeze()
			start := time.Now()
			err := call(s)
			took := time.Since(start)
			if !errors.Is(err, triage.ErrUnreachable) || !strings.Contains(err.Error(), "stopped answering") {
				t.Errorf("%s on a silent server: %v, want ErrUnreachable naming the silence", name, err)
			}
			if limit := timeout + 3*time.Second + 2*time.Second; took > limit {
				t.Errorf("%s on a silent server took %s, want under %s", name, took, limit)
			}
		})
		t.Run("gone/"+name, func(t *testing.T) {
			t.Parallel()
			r := startRelay(t, target)
			s := open(t, r)
			r.cut()
			err := call(s)
			if !errors.Is(err, triage.ErrUnreachable) {
				t.Errorf("%s on a server that went away: %v, want ErrUnreachable", name, err)
			}
		})
	}
}
