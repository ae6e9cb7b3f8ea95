package stress

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// auditLine is the part of an audit line these tests read.
type auditLine struct {
	Run   string   `json:"run"`
	Phase string   `json:"phase"`
	Count int64    `json:"count"`
	IDs   []string `json:"ids"`
	Error string   `json:"error"`
}

// readAudit parses every line of an audit log; a torn line fails the test.
func readAudit(t *testing.T, path string) []auditLine {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Fatalf("audit log ends in a torn line: …%q", raw[max(0, len(raw)-60):])
	}
	var out []auditLine
	for _, l := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var a auditLine
		if err := json.Unmarshal(l, &a); err != nil {
			t.Fatalf("audit line is not whole JSON (%v): %.200q", err, l)
		}
		out = append(out, a)
	}
	return out
}

// startEnv starts jobtriage in dir with extra environment variables.
func (j jobtriage) startEnv(t *testing.T, dir string, env []string, args ...string) *process {
	t.Helper()
	p := &process{done: make(chan struct{})}
	p.cmd = exec.Command(j.path, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + j.dir, "NO_COLOR=1", "TERM=dumb"}, env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start jobtriage: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// A SIGKILLed retry left no audit line for 39,137 moved rows: the intent
// line is now written before the first job moves, so the kill leaves it.
func TestSIGKILLedRetryLeavesItsIntent(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	s := seed(t, "sqlite", 20_000)
	log := filepath.Join(t.TempDir(), "audit.log")
	p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn, "--audit-log", log)
	deadline := time.Now().Add(runTimeout)
	for {
		if raw, _ := os.ReadFile(log); len(raw) > 0 {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("retry ended (%v) before its intent line appeared: %s", p.err, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no intent line")
		}
		time.Sleep(time.Millisecond)
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	lines := readAudit(t, log)
	if len(lines) == 0 || lines[0].Phase != "intent" || lines[0].Run == "" {
		t.Fatalf("audit log after SIGKILL: %+v", lines)
	}
	moved := s.census(t, "after the SIGKILL")
	t.Logf("killed with %d of 20000 moved; the log holds %d line(s), the first an intent", moved, len(lines))
}

// A TMPDIR that fills up mid-run aborted a retry part-way (1,865 of 46,592)
// and wrote unterminated JSON. On a 64 KB tmpfs the spools move into memory
// and the retry completes; the audit outcome lists every id.
func TestRetryOnAFullTMPDIR(t *testing.T) {
	requireStress(t)
	tmp := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=65536", "tmpfs", tmp).CombinedOutput(); err != nil {
		skipUnlessRequired(t, "cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", tmp).Run() })
	bin := buildJobtriage(t)
	const n = 20_000
	s := seed(t, "sqlite", n)
	log := filepath.Join(t.TempDir(), "audit.log")
	p := bin.startEnv(t, bin.dir, []string{"TMPDIR=" + tmp}, "retry", "all", "--yes", "--json", "--dsn", s.dsn, "--audit-log", log)
	if code := p.wait(t); code != 0 {
		t.Fatalf("retry on a full TMPDIR: exit %d: %s", code, p.stderr.String())
	}
	s.allMovedIntact(t)
	var res struct {
		Retried int      `json:"retried"`
		IDs     []string `json:"ids"`
	}
	if err := json.Unmarshal(p.stdout.Bytes(), &res); err != nil {
		t.Fatalf("--json output is not whole JSON: %v", err)
	}
	lines := readAudit(t, log)
	if len(lines) != 2 || lines[1].Phase != "outcome" || lines[1].Count != n || len(lines[1].IDs) != n {
		t.Fatalf("audit after a full TMPDIR: %d lines, outcome %s", len(lines), fmt.Sprint(lines[len(lines)-1].Count))
	}
	if len(res.IDs) != n {
		t.Errorf("--json lists %d ids, want %d", len(res.IDs), n)
	}
}
