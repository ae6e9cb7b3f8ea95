package sqltest

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// Relay is a TCP proxy in front of a database server that a test can
// freeze (every byte either way is held: the server stops answering, as a
// frozen host or a dead network path does) or cut (every connection is
// closed and no new one is accepted: the server went away). Tests fault
// their own relay, never the shared server behind it.
type Relay struct {
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

// StartRelay relays to the server of ep until the test ends.
func StartRelay(tb testing.TB, ep sqlstore.Endpoint) *Relay {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	target := net.JoinHostPort(ep.Host, strconv.Itoa(ep.Port)) // NewEndpoint's, over TCP
	r := &Relay{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if s, err := net.Dial("tcp", target); err != nil {
				c.Close()
			} else {
				r.mu.Lock()
				r.conns = append(r.conns, c, s)
				r.mu.Unlock()
				go r.pipe(s, c)
				go r.pipe(c, s)
			}
		}
	}()
	tb.Cleanup(r.Cut)
	return r
}

// Via is ep reached through the relay.
func (r *Relay) Via(ep sqlstore.Endpoint) sqlstore.Endpoint {
	ep.Host, ep.Port, ep.Socket = "127.0.0.1", r.ln.Addr().(*net.TCPAddr).Port, ""
	return ep
}

// pipe copies src to dst, holding what it read while the relay is frozen.
func (r *Relay) pipe(dst, src net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for r.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if _, werr := dst.Write(buf[:n]); werr != nil || err != nil {
			src.Close()
			return
		}
	}
}

// Freeze stops forwarding: the server, as the client sees it, goes silent.
func (r *Relay) Freeze() { r.frozen.Store(true) }

// Cut closes every relayed connection and accepts no new one; what a
// freeze held is dropped, never delivered late.
func (r *Relay) Cut() {
	r.ln.Close()
	r.mu.Lock()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.frozen.Store(false)
}
