package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// lastLine is the last line of an audit log: the newest outcome.
func lastLine(raw []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	return lines[len(lines)-1]
}

// auditLines reads every line of an audit log; each must be whole JSON.
func auditLines(t *testing.T, path string) []auditEntry {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("audit log does not end with a whole line: …%q", raw[max(0, len(raw)-40):])
	}
	var out []auditEntry
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var e auditEntry
		if err := json.Unmarshal(l, &e); err != nil {
			t.Fatalf("torn or invalid audit line %.200q: %v", l, err)
		}
		out = append(out, e)
	}
	return out
}

// Each run writes its intent before it changes anything and its outcome
// after, tied by one run id: a run killed in between leaves its intent.
func TestAuditIntentThenOutcome(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	if code := h.run("retry", "all", "--yes", "--dsn", dsn, "--audit-log", logPath); code != ExitPartial {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := auditLines(t, logPath)
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want intent and outcome", len(lines))
	}
	in, out := lines[0], lines[1]
	if in.Phase != auditIntent || in.Count != 0 || len(in.IDs) != 0 || in.Command != "retry" {
		t.Errorf("intent line %+v", in)
	}
	if out.Phase != auditOutcome || out.Count != 2 || len(out.IDs) != 2 || out.Error != "" {
		t.Errorf("outcome line %+v", out)
	}
	if in.Run == "" || in.Run != out.Run {
		t.Errorf("run ids %q and %q differ", in.Run, out.Run)
	}
	// A run that changes nothing still closes its intent with an outcome.
	if code := h.run("flush", "--yes", "--hours", "100000", "--dsn", dsn, "--audit-log", logPath); code != ExitOK {
		t.Fatalf("flush exit %d: %s", code, h.errOut.String())
	}
	lines = auditLines(t, logPath)
	if len(lines) != 4 || lines[2].Phase != auditIntent || lines[3].Phase != auditOutcome || lines[3].Command != "flush" {
		t.Errorf("after flush: %+v", lines)
	}
}

// An audit log that cannot be written is refused before anything is asked
// or changed (it was found only after 46,592 jobs had moved). A full
// device opens and locks like a file, and is refused at the intent line:
// exit 5 all the same.
func TestUnwritableAuditLogIsRefusedBeforeAnyWrite(t *testing.T) {
	dsn, store := seed(t)
	dir := t.TempDir()
	for name, path := range map[string]string{
		"missing directory": filepath.Join(dir, "no", "such", "audit.log"),
		"a directory":       dir,
		"a full device":     "/dev/full",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(path); name == "a full device" && err != nil {
				t.Skipf("no %s here: %v", path, err)
			}
			h := newHarness(t, false)
			for _, args := range [][]string{
				{"retry", "all", "--yes"}, {"forget", "--queue", "default", "--yes"}, {"flush", "--yes"}, {"prune", "--hours", "1", "--yes"},
			} {
				code := h.run(append(args, "--dsn", dsn, "--audit-log", path)...)
				if code != ExitUnreachable || !strings.Contains(h.errOut.String(), "audit log") || !strings.Contains(h.errOut.String(), "nothing was changed") {
					t.Errorf("%v: exit %d: %s", args, code, h.errOut.String())
				}
			}
			var n int
			if err := store.DB().Get(&n, "SELECT COUNT(*) FROM failed_jobs"); err != nil || n != 4 {
				t.Errorf("failed_jobs holds %d rows (%v), want all 4", n, err)
			}
		})
	}
	// A dry run writes nothing and needs no log.
	h := newHarness(t, false)
	if code := h.run("retry", "all", "--dry-run", "--dsn", dsn, "--audit-log", filepath.Join(dir, "no", "audit.log")); code != ExitPartial && code != ExitOK {
		t.Errorf("dry run exit %d: %s", code, h.errOut.String())
	}
}

// tinyTmpfs mounts a tmpfs of size bytes, or skips where mounting is not
// allowed (not root, no CAP_SYS_ADMIN).
func tinyTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// A full disk never leaves a torn line: the partial write is cut back, and
// the outcome is recorded without its ids, saying why.
func TestFullDiskNeverTearsAnAuditLine(t *testing.T) {
	dir := tinyTmpfs(t, 64<<10)
	logPath := filepath.Join(dir, "audit.log")
	if err := os.WriteFile(logPath, []byte(`{"earlier":"line"}`+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	ids := newSpool()
	defer ids.Close()
	for i := range 20000 { // ~800 KB of ids: far more than the disk holds
		if err := ids.add(fmt.Sprintf("5d7e55e5-0000-4000-8000-%012x", i)); err != nil {
			t.Fatal(err)
		}
	}
	err := appendAuditLine(logPath, auditEntry{Phase: auditOutcome, Command: "retry", Count: 20000, spooled: ids})
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("append on a full disk: %v, want ENOSPC", err)
	}
	raw, _ := os.ReadFile(logPath)
	if string(raw) != `{"earlier":"line"}`+"\n" {
		t.Errorf("log after the failed append: %d bytes, want the earlier line only", len(raw))
	}
	// Through audit: the outcome is kept without its ids, and the failure
	// is still reported.
	h := newHarness(t, false)
	h.f.AuditLog = logPath
	err = audit(h.f, auditEntry{Command: "retry", Count: 20000, spooled: ids})
	if err == nil || !strings.Contains(err.Error(), "without its ids") {
		t.Errorf("audit on a full disk: %v", err)
	}
	lines := auditLines(t, logPath)
	if len(lines) != 2 || lines[1].Count != 20000 || lines[1].IDsOmitted == "" || len(lines[1].IDs) != 0 {
		t.Errorf("lines after a full disk: %+v", lines)
	}
}

// failingFile is a temporary file on a disk that fills after limit bytes:
// the write that crosses it is partial and fails with ENOSPC.
type failingFile struct {
	b     []byte
	limit int
}

func (f *failingFile) WriteAt(p []byte, off int64) (int, error) {
	n := min(len(p), max(f.limit-int(off), 0))
	f.b = append(f.b[:off], p[:n]...)
	if n < len(p) {
		return n, syscall.ENOSPC
	}
	return n, nil
}

func (f *failingFile) ReadAt(p []byte, off int64) (int, error) {
	if n := copy(p, f.b[off:]); n < len(p) {
		return n, io.EOF
	}
	return len(p), nil
}

func (f *failingFile) Truncate(size int64) error {
	f.b = f.b[:size]
	return nil
}

// A temporary file that fills up mid-run moves the spool into memory:
// nothing recorded is lost and the run goes on (it was aborted part-way).
func TestSpoolFallsBackToMemoryWhenTheFileFails(t *testing.T) {
	s := &spool{f: &failingFile{limit: 100_000}}
	const n = 10_000
	for i := range n {
		if err := s.AddIDs([]string{fmt.Sprintf("id-%06d", i)}); err != nil {
			t.Fatalf("AddIDs #%d: %v", i, err)
		}
	}
	if s.f != nil {
		t.Fatalf("spool still on %T", s.f)
	}
	checkSpool(t, s, n)
}

// checkSpool reads a spool back as a JSON array and checks it holds id-0…n-1.
func checkSpool(t *testing.T, s *spool, n int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("[")
	if err := s.writeArray(&b, ""); err != nil {
		t.Fatal(err)
	}
	b.WriteString("]")
	var got []string
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("spool is not whole JSON: %v", err)
	}
	if len(got) != n {
		t.Fatalf("spool holds %d ids, want %d", len(got), n)
	}
	for i, id := range got {
		if id != fmt.Sprintf("id-%06d", i) {
			t.Fatalf("id #%d is %q", i, id)
		}
	}
}

// The same with a real full TMPDIR (a 64 KB tmpfs).
func TestSpoolSurvivesAFullTMPDIR(t *testing.T) {
	dir := tinyTmpfs(t, 64<<10)
	t.Setenv("TMPDIR", dir)
	s := newSpool()
	defer s.Close()
	if _, ok := s.f.(*os.File); !ok {
		t.Fatalf("spool not in TMPDIR: %T", s.f)
	}
	const n = 50_000 // ~600 KB
	for i := range n {
		if err := s.add(fmt.Sprintf("id-%06d", i)); err != nil {
			t.Fatalf("add #%d: %v", i, err)
		}
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if s.f != nil {
		t.Fatalf("spool still on %T after TMPDIR filled", s.f)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the failed temporary file was left behind: %v", ents)
	}
	checkSpool(t, s, n)
}

// --statement-timeout below a millisecond would be sent as 0 ms, which the
// servers read as "no limit": refused as a usage error.
func TestStatementTimeoutBelowOneMillisecondIsRefused(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	for _, v := range []string{"500us", "0s", "-1s"} {
		if code := h.run("failed", "--statement-timeout", v, "--dsn", dsn); code != ExitUsage || !strings.Contains(h.errOut.String(), "at least 1ms") {
			t.Errorf("--statement-timeout %s: exit %d: %s", v, code, h.errOut.String())
		}
	}
	if code := h.run("failed", "--statement-timeout", "1ms", "--dsn", dsn); code == ExitUsage {
		t.Errorf("--statement-timeout 1ms refused: %s", h.errOut.String())
	}
}

// However a cancellation surfaces (context.Canceled, a driver error, a
// closed connection), an interrupted command exits 130.
func TestInterruptedCommandExits130(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h.out.Reset()
	h.errOut.Reset()
	if code := Run(ctx, h.f, []string{"retry", "all", "--yes", "--dsn", dsn}); code != ExitInterrupted {
		t.Errorf("exit %d, want 130: %s", code, h.errOut.String())
	}
	if got := h.errOut.String(); got != "jobtriage: interrupted\n" {
		t.Errorf("stderr %q", got)
	}
}
