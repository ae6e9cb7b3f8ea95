//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// ptyBudget is the silent-terminal bound: a command run on a terminal that answers
// no query (script, docker exec -t, kubectl exec -t) exits within it. The
// regression it guards against cost 5 s (termenv.OSCTimeout) every time.
const ptyBudget = 500 * time.Millisecond

// ptyAttempts: the fastest of a few runs is compared with ptyBudget, so a
// loaded CI machine does not fail the test; a stall happens on every run.
const ptyAttempts = 3

// built is the jobtriage binary the tests of this package run, built once
// per test process on first use (buildBinary); TestMain removes it.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// buildBinary returns the path of jobtriage built from this checkout with
// go build's defaults, building it on the first call.
func buildBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "jobtriage-main-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "jobtriage")
		if out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// silentPTYEnv is a colour terminal's environment without what would make
// the terminal look absent or answer for it: CI (termenv then assumes no
// TTY), NO_COLOR, COLORFGBG (an answer without a query).
func silentPTYEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "CI", "NO_COLOR", "COLORFGBG", "TERM", "JOBTRIAGE_FORCE_TTY":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "TERM=xterm-256color")
}

// runOnSilentPTY runs bin with stdin, stdout and stderr on a pty whose
// other end reads everything and answers nothing; keys, if any, are typed
// once the output contains ready. It returns the output, how long the
// process ran and how long ready took to appear.
func runOnSilentPTY(t *testing.T, bin, dir string, keys, ready string, args ...string) (string, time.Duration, time.Duration) {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer master.Close()
	if err := pty.Setsize(master, &pty.Winsize{Rows: 24, Cols: 80}); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, args...)
	c.Dir, c.Env = dir, silentPTYEnv()
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	// The pty is the session's controlling terminal, as under script or
	// docker exec -t: termenv (and termbg) ask only a foreground process.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	var out bytes.Buffer
	var mu sync.Mutex
	var wg sync.WaitGroup
	typed := keys == ""
	var readyAfter time.Duration
	start := time.Now()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	wg.Add(1)
	go func() { // read, never answer a query
		defer wg.Done()
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			if !typed && strings.Contains(out.String(), ready) {
				typed, readyAfter = true, time.Since(start)
				_, _ = io.WriteString(master, keys)
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.Process.Kill()
		<-done
		t.Fatalf("%v did not exit within 30 s; output so far:\n%q", args, out.String())
	}
	elapsed := time.Since(start)
	master.Close()
	wg.Wait()
	return out.String(), elapsed, readyAfter
}

// TestNoStallOnASilentTerminal runs the real binary on a pty that never
// answers a terminal query and asserts every command ends within
// ptyBudget: no command may wait for the terminal.
func TestNoStallOnASilentTerminal(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	if out, err := exec.Command(bin, "demo").CombinedOutput(); err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobtriage-demo.sqlite")); err != nil {
		// demo writes into the working directory.
		c := exec.Command(bin, "demo")
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("demo: %v\n%s", err, out)
		}
	}
	dsn := "sqlite:" + filepath.Join(dir, "jobtriage-demo.sqlite")
	for _, args := range [][]string{
		{"--help"},
		{"failed", "--dsn", dsn},
		{"failed", "--group", "--dsn", dsn},
		{"failed", "--json", "--limit", "1", "--dsn", dsn},
		{"doctor", "--dsn", dsn},
	} {
		best := time.Hour
		var out string
		for range ptyAttempts {
			var d time.Duration
			out, d, _ = runOnSilentPTY(t, bin, dir, "", "", args...)
			best = min(best, d)
		}
		t.Logf("%v: %v", args, best)
		if best > ptyBudget {
			t.Errorf("%v on a silent terminal took %v (budget %v); output:\n%q", args, best, ptyBudget, out)
		}
		if strings.Contains(out, "\x1b]11;?") || strings.Contains(out, "\x1b[6n") {
			t.Errorf("%v queried the terminal although it uses no answer:\n%q", args, out)
		}
	}

	// The TUI uses the answer (adaptive colours), so it asks, once and
	// bounded: its first screen must appear within the budget, and "q" must
	// end it.
	best := time.Hour
	for range ptyAttempts {
		out, _, first := runOnSilentPTY(t, bin, dir, "q", "Signatures", "tui", "--refresh", "0", "--dsn", dsn)
		if first == 0 {
			t.Fatalf("tui drew no signature list:\n%q", out)
		}
		if n := strings.Count(out, "\x1b]11;?"); n != 1 {
			t.Errorf("tui asked for the background %d times, want once:\n%q", n, out)
		}
		best = min(best, first)
	}
	t.Logf("tui first screen: %v", best)
	if best > ptyBudget {
		t.Errorf("tui's first screen on a silent terminal took %v (budget %v)", best, ptyBudget)
	}
}
