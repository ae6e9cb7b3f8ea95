// Package earlysignal takes SIGINT, SIGTERM and SIGHUP as early in start-up
// as Go allows: in its package initialiser, which runs before those of the
// heavier dependencies (go-runewidth alone spends ~20 ms building tables).
// Without it a Ctrl-C in a process's first tens of milliseconds killed it
// with the default action instead of the exit 130 jobtriage promises.
package earlysignal

import (
	"os"
	"os/signal"
	"syscall"
)

// C receives every SIGINT, SIGTERM and SIGHUP from start-up on. It is never
// stopped, so a signal that lands while the process exits cannot kill it
// with the default action either.
var C = make(chan os.Signal, 2)

func init() {
	signal.Notify(C, os.Interrupt, syscall.SIGTERM)
	// A closed ssh session hangs up: like SIGTERM, the command stops,
	// says what it did and writes its audit outcome, instead of dying
	// with neither. Under nohup (SIGHUP ignored from the start) Notify
	// would undo the ignoring, so the hang-up stays ignored.
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(C, syscall.SIGHUP)
	}
}
