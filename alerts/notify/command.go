package notify

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/alerts"
)

// DefaultCommandTimeout bounds a command notifier run when none is set.
const DefaultCommandTimeout = 30 * time.Second

// maxStderrBytes bounds what is kept of a command's stderr.
const maxStderrBytes = 16 << 10

// CommandConfig configures a command that receives each digest.
type CommandConfig struct {
	// Path is the program; looked up in PATH when it has no slash.
	Path string
	// Args are passed as they are, never through a shell. They may hold
	// secrets, so they never appear in errors.
	Args []string
	// Timeout bounds one run; default DefaultCommandTimeout. The attempt's
	// context may end it sooner.
	Timeout time.Duration
}

// Command runs a program with the digest's version-1 Body as JSON on stdin.
// A non-zero exit is a final error carrying stderr's first line; a run cut
// short by its timeout may be retried.
type Command struct {
	name    string
	path    string
	args    []string
	timeout time.Duration
	secrets scrubber
}

// NewCommand checks the configuration.
func NewCommand(cfg CommandConfig) (*Command, error) {
	if strings.TrimSpace(cfg.Path) == "" {
		return nil, errors.New("command notifier: the program path is empty")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("command notifier: timeout %s must not be negative", cfg.Timeout)
	}
	return &Command{
		name:    "command:" + filepath.Base(cfg.Path),
		path:    cfg.Path,
		args:    append([]string(nil), cfg.Args...),
		timeout: cmp.Or(cfg.Timeout, DefaultCommandTimeout),
		secrets: argSecrets(cfg.Args),
	}, nil
}

// Name labels the notifier.
func (c *Command) Name() string { return c.name }

// stderrGrace is how long a run waits, once the program has exited, for
// what it left running to close stdin and stderr (exec.Cmd.WaitDelay).
const stderrGrace = 100 * time.Millisecond

// Notify runs the command once. The run ends when the program exits: its
// exit status says whether the digest was delivered, and whatever it left
// running in its process group is killed then, so that background children
// neither hold the run up nor pile up digest after digest. stdout is the
// null device.
func (c *Command) Notify(ctx context.Context, d alerts.Digest) error {
	body, err := marshal(NewBody(d))
	if err != nil {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.path, c.args...)
	stderr := &limitedBuffer{limit: maxStderrBytes}
	cmd.Stdin, cmd.Stderr, cmd.WaitDelay = bytes.NewReader(body), stderr, stderrGrace
	killGroupOnCancel(cmd)
	err = cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // exited 0, leaving children that held its pipes
	}
	if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
		return fmt.Errorf("%s: did not finish: %w", c.name, ctxErr)
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		// A program may echo its arguments (a --token) in its errors.
		return &CommandError{Notifier: c.name, ExitCode: exitErr.ExitCode(), Stderr: firstLine(c.secrets.scrub(stderr.String()), 200)}
	}
	if err != nil {
		// Could not start: not found, not executable. Final.
		return fmt.Errorf("%s: cannot run the program: %s", c.name, clean(c.secrets.scrub(startError(err)), 200))
	}
	return nil
}

// startError drops the arguments Go puts in exec errors, keeping the cause.
func startError(err error) string {
	var execErr *exec.Error
	if errors.As(err, &execErr) {
		return execErr.Err.Error()
	}
	return err.Error()
}

// limitedBuffer keeps the first limit bytes written and drops the rest, so a
// chatty command cannot grow memory.
type limitedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
