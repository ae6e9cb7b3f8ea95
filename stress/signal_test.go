package stress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

// interruptedWithin bounds how long jobtriage may take to exit 130 after a
// SIGINT or SIGTERM: its grace for a clean end (cmd.interruptGrace, 500 ms)
// plus scheduling noise on a loaded CI machine.
const interruptedWithin = 2 * time.Second

// sqliteLaravel makes a Laravel SQLite database at path with n failed jobs.
func sqliteLaravel(t *testing.T, path string, n int) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.OpenRaw(ctx, sqlstore.Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	defer db.Close()
	if err := sqlstore.CreateLaravelSchema(ctx, db, "sqlite", sqlstore.SchemaLaravel8); err != nil {
		t.Fatal(err)
	}
	if err := insertBacklog(ctx, db, "sqlite", n); err != nil {
		t.Fatal(err)
	}
}

func sqliteCount(t *testing.T, path string) int {
	t.Helper()
	db, err := sqlstore.OpenRaw(context.Background(), sqlstore.Endpoint{Driver: "sqlite", Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.Get(&n, "SELECT COUNT(*) FROM failed_jobs"); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSQLiteFlushChangesExactlyTheFileNamed: `flush --yes` on
// sqlite:…/x%2541.sqlite (the file "x%41.sqlite") once emptied "xA.sqlite",
// on h#1.sqlite emptied "./h", and on q?mode=ro.sqlite emptied "./q" (the
// '?' began a query). The named file is emptied; the decoy the unescaped URI
// would have opened keeps its rows.
func TestSQLiteFlushChangesExactlyTheFileNamed(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, tc := range []struct{ name, dsnPath, file, decoy string }{
		// The DSN is URL-decoded once (%25 is '%'), as a DSN is.
		{"percent", "x%2541.sqlite", "x%41.sqlite", "xA.sqlite"},
		{"hash", "h#1.sqlite", "h#1.sqlite", "h"},
		{"question", "q?mode=ro.sqlite", "q?mode=ro.sqlite", "q"},
	} {
		// Named so that the temporary directory holds no '%' itself.
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			sqliteLaravel(t, filepath.Join(dir, tc.file), 5)
			sqliteLaravel(t, filepath.Join(dir, tc.decoy), 3)
			for _, dsn := range []string{"sqlite:" + filepath.Join(dir, tc.dsnPath), "sqlite:" + tc.dsnPath} {
				p := bin.startIn(t, dir, "flush", "--yes", "--dsn", dsn)
				if code := p.wait(t); code != 0 {
					t.Fatalf("flush --dsn %s: exit %d: %s", dsn, code, p.stderr.String())
				}
				if n := sqliteCount(t, filepath.Join(dir, tc.file)); n != 0 {
					t.Errorf("flush --dsn %s left %d rows in %s", dsn, n, tc.file)
				}
				if want := "sqlite:" + filepath.Join(dir, tc.file); !strings.Contains(p.stdout.String()+p.stderr.String(), want) {
					t.Errorf("flush --dsn %s does not name %s: %s%s", dsn, want, p.stdout.String(), p.stderr.String())
				}
				if n := sqliteCount(t, filepath.Join(dir, tc.decoy)); n != 3 {
					t.Errorf("flush --dsn %s changed the decoy %s: %d rows, want 3", dsn, tc.decoy, n)
				}
			}
		})
	}
}

// openPTY opens a pseudo-terminal pair with the kernel's /dev/ptmx (no
// dependency): what jobtriage sees as its terminal, and the test's side.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		skipUnlessRequired(t, "no pseudo-terminals here: %v", err)
	}
	unlock := 0
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// syncBuffer collects what jobtriage writes to its terminal.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestSignalAtPromptExits130AtOnce: Ctrl-C at a [y/N] prompt was
// swallowed until Enter, then exited 3; SIGTERM was ignored. Both must end
// the process at once with 130, changing nothing.
func TestSignalAtPromptExits130AtOnce(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "app.sqlite")
	sqliteLaravel(t, db, 5)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			master, slave := openPTY(t)
			var screen syncBuffer
			go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(teeReader{master, &screen}) }()
			cmd := exec.Command(bin.path, "flush", "--dsn", "sqlite:"+db)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "NO_COLOR=1", "TERM=xterm"}
			cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			deadline := time.Now().Add(30 * time.Second)
			for !strings.Contains(screen.String(), "[y/N]") {
				if time.Now().After(deadline) {
					t.Fatalf("no prompt; terminal shows %q", screen.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // well inside the read
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				took := time.Since(sent)
				if code := exitCode(t, err); code != 130 {
					t.Errorf("exit %d after %s, want 130; terminal: %q", code, sig, screen.String())
				}
				if took > 500*time.Millisecond {
					t.Errorf("exit took %s after %s, want at once", took, sig)
				}
				t.Logf("%s at the prompt: exit after %s", sig, took.Round(time.Millisecond))
			case <-time.After(interruptedWithin):
				t.Fatalf("still running %s after %s; terminal: %q", interruptedWithin, sig, screen.String())
			}
			if n := sqliteCount(t, db); n != 5 {
				t.Errorf("%d failed jobs left, want all 5", n)
			}
		})
	}
}

// teeReader copies what it reads to w.
type teeReader struct {
	r *os.File
	w *syncBuffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.Write(p[:n]) //nolint:errcheck
	return n, err
}

// frozenBackend starts `jobtriage failed` against PostgreSQL while the test
// holds an exclusive lock on failed_jobs, finds jobtriage's backend (it
// waits on the lock, application_name 'jobtriage') and SIGSTOPs it, then
// lets the lock go: the backend now answers nothing, not even the server's
// own statement_timeout. It is SIGCONTed in cleanup.
func frozenBackend(t *testing.T, bin jobtriage, s *seeded, timeout time.Duration) (*process, time.Time) {
	t.Helper()
	ctx := context.Background()
	locker, err := sqlstore.OpenRaw(ctx, s.ep)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	tx, err := locker.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.Exec("LOCK TABLE failed_jobs IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := bin.start(t, "failed", "--dsn", s.dsn, "--statement-timeout", timeout.String())
	var pid int
	for deadline := time.Now().Add(timeout); pid == 0; {
		err := s.db.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity
			WHERE application_name = 'jobtriage' AND datname = current_database() AND wait_event_type = 'Lock' LIMIT 1`).Scan(&pid)
		if err != nil && time.Now().After(deadline) {
			t.Fatalf("jobtriage's backend never waited on the lock: %v; stderr %s", err, p.stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Skipf("cannot stop PostgreSQL backend %d (not on this machine, or not allowed): %v", pid, err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(pid, syscall.SIGCONT)
		s.awaitNoSessions(t)
	})
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped backend %d %s after start", pid, time.Since(start).Round(time.Millisecond))
	return p, start
}

// TestFrozenPostgresBackendCannotHoldACommand: a SIGSTOPped backend held
// jobtriage for as long as it was frozen (90.9 s with --statement-timeout
// 10s), and Ctrl-C did nothing. Now the client-side deadline (statement
// timeout + 3 s) ends the command, and SIGINT ends it at once with 130.
func TestFrozenPostgresBackendCannotHoldACommand(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	s := seed(t, "postgres", 50)
	const timeout = 2 * time.Second
	const margin = 3 * time.Second // sqlstore's clientDeadlineMargin
	t.Run("deadline", func(t *testing.T) {
		p, start := frozenBackend(t, bin, s, timeout)
		limit := timeout + margin + 2*time.Second
		select {
		case <-p.done:
		case <-time.After(limit):
			t.Fatalf("jobtriage still running %s after start with --statement-timeout %s", limit, timeout)
		}
		took := time.Since(start)
		code := exitCode(t, p.err)
		if code != 5 || !strings.Contains(p.stderr.String(), "stopped answering") {
			t.Errorf("exit %d after %s: %s", code, took, p.stderr.String())
		}
		t.Logf("frozen backend: jobtriage ended after %s (exit %d): %s", took.Round(time.Millisecond), code, strings.TrimSpace(p.stderr.String()))
	})
	t.Run("SIGINT", func(t *testing.T) {
		p, _ := frozenBackend(t, bin, s, 30*time.Second)
		time.Sleep(200 * time.Millisecond)
		sent := time.Now()
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
		case <-time.After(interruptedWithin):
			t.Fatalf("SIGINT did not end jobtriage within %s", interruptedWithin)
		}
		took := time.Since(sent)
		if code := exitCode(t, p.err); code != 130 {
			t.Errorf("exit %d after SIGINT, want 130: %s", code, p.stderr.String())
		}
		t.Logf("frozen backend: SIGINT ended jobtriage after %s", took.Round(time.Millisecond))
	})
}

// sigintRows is the table TestSIGINTDuringRetryAlwaysExits130 retries: large
// enough that its eight runs, each interrupted at most 430 ms in, cannot
// finish it (with 20,000 rows a whole PostgreSQL retry took under 400 ms
// once the retry was pipelined, the first run could end it, and the seven
// after it had nothing to do).
const sigintRows = 100_000

// TestSIGINTDuringRetryAlwaysExits130: Ctrl-C exited 1 instead of 130 in 4
// of 14 PostgreSQL runs (the cancellation surfaced as a driver error). A
// retry interrupted at random moments exits 130 every time it was still
// running, within the grace, and loses or doubles nothing.
func TestSIGINTDuringRetryAlwaysExits130(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	base := rngSeed(t)
	t.Logf("signal schedule seed %d (replay with %s=%d)", base, seedEnv, base)
	for _, driver := range []string{"postgres", "mysql"} {
		t.Run(driver, func(t *testing.T) {
			s := seed(t, driver, sigintRows)
			rng := rand.New(rand.NewPCG(base, streamOf(driver)))
			interrupted := 0
			for i := range 8 {
				p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
				delay := 30*time.Millisecond + time.Duration(rng.Int64N(int64(400*time.Millisecond)))
				select {
				case <-p.done:
				case <-time.After(delay):
					sent := time.Now()
					_ = p.cmd.Process.Signal(syscall.SIGINT)
					select {
					case <-p.done:
					case <-time.After(interruptedWithin):
						t.Fatalf("run %d: SIGINT did not end retry within %s", i, interruptedWithin)
					}
					var ee *exec.ExitError
					if errors.As(p.err, &ee) && !ee.Exited() {
						t.Fatalf("run %d: SIGINT %s into the run killed jobtriage (%v) instead of ending it: %s", i, delay, p.err, p.stderr.String())
					}
					code := exitCode(t, p.err)
					if code != 130 && code != 0 {
						t.Errorf("run %d: SIGINT %s into the run: exit %d, want 130: %s", i, delay, code, p.stderr.String())
					}
					if code == 130 {
						interrupted++
						t.Logf("run %d: SIGINT %s into the run: exit 130 after %s", i, delay, time.Since(sent).Round(time.Millisecond))
					}
				}
				s.awaitNoSessions(t)
				s.census(t, fmt.Sprintf("after run %d", i))
			}
			if interrupted == 0 {
				t.Errorf("no run was still going when its SIGINT came")
			}
		})
	}
}

// TestSignalMidRetryStopsItCleanly: SIGHUP (a closed ssh session) mid-retry
// killed jobtriage with exit 129, no summary line and no audit outcome,
// where SIGINT and SIGTERM got all three. Each of them now stops the retry
// between batches: exit 130, the count moved so far, "interrupted", an
// outcome line closing the intent, and no job lost or doubled.
func TestSignalMidRetryStopsItCleanly(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			s := seed(t, "sqlite", 400)
			log := filepath.Join(t.TempDir(), "audit.log")
			// 100 jobs a second: the signal lands well inside the run.
			p := bin.start(t, "retry", "all", "--yes", "--rate", "100/s", "--dsn", s.dsn, "--audit-log", log)
			time.Sleep(1500 * time.Millisecond)
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-p.done:
			case <-time.After(interruptedWithin):
				t.Fatalf("%s did not end retry within %s", sig, interruptedWithin)
			}
			stderr := p.stderr.String()
			if code := exitCode(t, p.err); code != 130 {
				t.Errorf("exit %d after %s, want 130: %s", code, sig, stderr)
			}
			if !strings.Contains(stderr, "retried before the error") || !strings.HasSuffix(stderr, "jobtriage: interrupted\n") {
				t.Errorf("after %s stderr does not say what was retried, then interrupted: %q", sig, stderr)
			}
			lines := readAudit(t, log)
			if len(lines) != 2 || lines[0].Phase != "intent" || lines[1].Phase != "outcome" || lines[1].Run != lines[0].Run || lines[1].Error == "" {
				t.Errorf("audit log after %s: %+v, want the intent and an outcome naming the interruption", sig, lines)
			}
			moved := s.census(t, "after "+sig.String())
			if moved == 0 || moved == 400 || len(lines) == 2 && int(lines[1].Count) != moved {
				t.Errorf("after %s: %d jobs moved, the outcome says %+v; want some of 400, as many as it says", sig, moved, lines)
			}
			t.Logf("%s after 1.5 s: %d of 400 retried, exit 130", sig, moved)
		})
	}
}
