package earlysignal

import (
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestHangUpIsTaken: SIGHUP (a closed ssh session) killed the process with
// the default action, with no summary and no audit outcome; it arrives on
// C as SIGINT and SIGTERM do.
func TestHangUpIsTaken(t *testing.T) {
	if signal.Ignored(syscall.SIGHUP) {
		// This test binary runs under nohup (a CI job started that way), so
		// SIGHUP was ignored from the start and is kept ignored, as
		// TestNohupKeepsHangUpIgnored requires. Run the test in a child that
		// starts with the default action: a caught signal is reset by exec,
		// an ignored one is not.
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
		defer signal.Reset(syscall.SIGHUP)
		cmd := exec.Command(os.Args[0], "-test.run=^TestHangUpIsTaken$", "-test.count=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("without nohup: %v\n%s", err, out)
		}
		return
	}
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM, syscall.SIGINT} {
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-C:
			if got != sig {
				t.Errorf("sent %s, C received %s", sig, got)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s never arrived on C", sig)
		}
	}
}

// nohupChildEnv marks the run of this test binary under nohup.
const nohupChildEnv = "EARLYSIGNAL_NOHUP_CHILD"

// TestNohupKeepsHangUpIgnored: under nohup SIGHUP is ignored from the start,
// and stays ignored: taking it would end a nohup'd retry when the session
// closes, which is what nohup is for.
func TestNohupKeepsHangUpIgnored(t *testing.T) {
	if os.Getenv(nohupChildEnv) != "" {
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-C:
			t.Fatalf("under nohup C received %s", got)
		case <-time.After(200 * time.Millisecond):
		}
		return
	}
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skipf("no nohup here: %v", err)
	}
	cmd := exec.Command(nohup, os.Args[0], "-test.run=^TestNohupKeepsHangUpIgnored$", "-test.count=1")
	cmd.Env = append(os.Environ(), nohupChildEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the run under nohup: %v\n%s", err, out)
	}
}
