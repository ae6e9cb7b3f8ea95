//go:build unix

package termbg

import (
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Queries: OSC 11 asks for the background colour, then CSI 6n for the
// cursor position. Every terminal answers the second, and answers in order,
// so its reply ("ESC [ row ; col R") marks the end of whatever the first
// produced: a terminal without OSC 11 costs one round trip, not the timeout.
const (
	queryOSC11 = "\x1b]11;?\x1b\\"
	queryCPR   = "\x1b[6n"
	// maxReply bounds what is read: both replies together are under 64 bytes.
	maxReply = 256
)

// query sends the two queries to out and reads in until the cursor report
// ends or timeout passes, with in in raw mode (no echo, no line buffering)
// and restored after. It returns what arrived before the cursor report.
func query(in, out *os.File, timeout time.Duration) (string, bool) {
	fd := int(in.Fd())
	if !term.IsTerminal(fd) || !term.IsTerminal(int(out.Fd())) {
		return "", false
	}
	// A background process group writing to its terminal would stop on
	// SIGTTOU: only the foreground group asks.
	if pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP); err != nil || pgrp != unix.Getpgrp() {
		return "", false
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return "", false
	}
	defer term.Restore(fd, old) //nolint:errcheck // best effort: the terminal stays usable either way
	if _, err := out.WriteString(queryOSC11 + queryCPR); err != nil {
		return "", false
	}
	deadline := time.Now().Add(timeout)
	var b strings.Builder
	buf := make([]byte, 64)
	for b.Len() < maxReply {
		left := time.Until(deadline)
		if left <= 0 {
			return "", false
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return "", false
		}
		// Read what is there, never more: poll said it will not block.
		m, err := unix.Read(fd, buf)
		if err != nil || m <= 0 {
			return "", false
		}
		b.Write(buf[:m])
		s := b.String()
		if i := strings.LastIndex(s, "\x1b["); i >= 0 && strings.HasSuffix(s, "R") {
			return s[:i], true
		}
	}
	return "", false
}
