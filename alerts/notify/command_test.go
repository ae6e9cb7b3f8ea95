//go:build unix

package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandThatLeavesChildren: a program that exited 0 leaving a child in
// the background (which holds its stderr) was reported "not delivered" a
// second later, and the child stayed. Exit 0 is delivered at once, and the
// child ends with the run; a failing one still reports its stderr.
func TestCommandThatLeavesChildren(t *testing.T) {
	for _, tt := range []struct {
		name, script, want string
	}{
		{"exit 0", `cat >/dev/null; sleep 60 & echo $! > "$1"`, ""},
		{"exit 3", `cat >/dev/null; sleep 60 & echo $! > "$1"; echo refused >&2; exit 3`, "command:sh: exited with status 3: refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "child.pid")
			c, err := NewCommand(CommandConfig{Path: "/bin/sh", Args: []string{"-c", tt.script, "sh", pidFile}, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = c.Notify(context.Background(), fixtureDigest())
			took := time.Since(start)
			if tt.want == "" && err != nil {
				t.Errorf("a program that exited 0: %v, want delivered", err)
			}
			if tt.want != "" && (err == nil || err.Error() != tt.want) {
				t.Errorf("a program that exited 3: %v, want %q", err, tt.want)
			}
			if took > time.Second/2 {
				t.Errorf("the run took %s: the child held it up", took.Round(time.Millisecond))
			}
			raw, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
			for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the child %d still runs after the run ended", pid)
				}
			}
		})
	}
}

// alive: pid runs (a zombie waiting for a parent that never reaps it, as
// PID 1 in a container may be, does not).
func alive(pid int) bool {
	if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			return stat[i+2] != 'Z' && stat[i+2] != 'X'
		}
		return true
	} else if !errors.Is(err, os.ErrNotExist) {
		return syscall.Kill(pid, 0) == nil
	}
	return false
}
