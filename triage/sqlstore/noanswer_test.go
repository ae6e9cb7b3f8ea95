package sqlstore_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// silentListener accepts TCP connections and, with hangUp, closes each at
// once; without, it holds each open and never says a word: a host that
// takes the connection but is no database server, or a frozen one.
func silentListener(t *testing.T, hangUp bool) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if hangUp {
				c.Close()
				continue
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	a := ln.Addr().(*net.TCPAddr)
	return a.IP.String(), a.Port
}

// TestOpenNoAnswerSaysSo: a server that never answers, or hangs up before
// a word, is "no answer from HOST:PORT within" the connect timeout, on both
// servers, instead of the driver's "context deadline exceeded" or
// "unexpected EOF".
func TestOpenNoAnswerSaysSo(t *testing.T) {
	const timeout = time.Second
	for _, driver := range []string{"postgres", "mysql"} {
		for _, hangUp := range []bool{false, true} {
			host, port := silentListener(t, hangUp)
			ep := sqlstore.Endpoint{Driver: driver, Host: host, Port: port, User: "u", Database: "d"}
			start := time.Now()
			_, err := sqlstore.Open(context.Background(), sqlstore.Config{Endpoint: ep, ConnectTimeout: timeout})
			want := "no answer from " + net.JoinHostPort(host, strconv.Itoa(port)) + " within " + timeout.String()
			if hangUp {
				want = net.JoinHostPort(host, strconv.Itoa(port)) + " closed the connection without answering"
			}
			if !errors.Is(err, triage.ErrUnreachable) || err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s, hang up %v: %v, want ErrUnreachable saying %q", driver, hangUp, err, want)
			}
			if took := time.Since(start); took > timeout+2*time.Second {
				t.Errorf("%s, hang up %v: took %s", driver, hangUp, took)
			}
		}
	}
}
