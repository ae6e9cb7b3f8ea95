package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMeasureReportsTimeAndRSS(t *testing.T) {
	var out, errb bytes.Buffer
	// The median must cover the sleep, and the child's RSS must be reported.
	err := run([]string{"-n", "3", "-warmup", "0", "-label", "alloc", "--", "sh", "-c", "head -c 40000000 /dev/zero | tr '\\0' a > /dev/null; sleep 0.05"}, &out, &errb)
	if err != nil {
		t.Fatal(err, errb.String())
	}
	fields := strings.Split(strings.TrimSpace(out.String()), "\t")
	if len(fields) != 5 || fields[0] != "alloc" || fields[1] != "3" {
		t.Fatalf("output %q", out.String())
	}
	if fields[4] == "0.0" {
		t.Errorf("max RSS %s MiB: rusage was not read", fields[4])
	}
	if fields[2] < "0.050" {
		t.Errorf("median %s s, the command sleeps 0.05 s", fields[2])
	}
}

func TestMeasureFailures(t *testing.T) {
	var out, errb bytes.Buffer
	for _, args := range [][]string{{}, {"-n", "0", "--", "true"}, {"--", "false"}, {"--", "/nonexistent/binary"}} {
		if err := run(args, &out, &errb); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
