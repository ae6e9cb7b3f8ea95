// Package redistest starts redis-server processes of a test's own, for fault
// tests that kill, restart or reconfigure a server: the shared test server
// is never touched.
package redistest

import (
	"bufio"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// Start runs redis-server on port (0 picks a free one), bound to 127.0.0.1,
// without snapshots, its files in a temporary directory, then args (which
// override those: "--dir", "--appendonly yes"). It returns once the server
// answers PING, with its port and a kill that ends it at once, as a crashed
// server ends; the test's end kills it too. Without redis-server the test
// is skipped, or failed under CI (sqltest.Required).
func Start(tb testing.TB, port int, args ...string) (int, func()) {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if sqltest.Required() {
			tb.Fatalf("no redis-server here: %v", err)
		}
		tb.Skipf("no redis-server here: %v", err)
	}
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "",
		"--appendonly", "no", "--dir", tb.TempDir()}, args...)...)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	kill := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	tb.Cleanup(kill)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(20 * time.Second); !answers(addr); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("redis-server on %s never answered", addr)
		}
	}
	return port, kill
}

// answers: the server at addr replies to PING (a loading server answers
// -LOADING instead).
func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}
