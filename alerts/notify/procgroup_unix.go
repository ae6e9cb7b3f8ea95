//go:build unix

package notify

import (
	"os/exec"
	"syscall"
)

// killGroupOnCancel runs the command in its own process group and kills the
// whole group on timeout, so a shell's children (curl, sleep) die with it
// instead of holding stderr open past the deadline.
func killGroupOnCancel(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// killGroup kills what the command left in its process group once the
// command itself has exited (a shell's "sleep 60 &"). While any member
// lives the group keeps the id, so it names no other process.
func killGroup(cmd *exec.Cmd) {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
