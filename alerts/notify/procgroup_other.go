//go:build !unix

package notify

import "os/exec"

// killGroupOnCancel keeps exec's default: only the process itself is killed.
func killGroupOnCancel(*exec.Cmd) {}

// killGroup leaves the command's children alone: there is no group to kill.
func killGroup(*exec.Cmd) {}
