package filestore

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestDecodeAcrossReadBoundaries: the UTF-8 check carries a character cut
// by a read into the next one, so the result does not depend on how the
// file arrives (one byte at a time here).
func TestDecodeAcrossReadBoundaries(t *testing.T) {
	fixture, err := os.ReadFile("testdata/failed-jobs.json")
	if err != nil {
		t.Fatal(err)
	}
	raw := []byte(`[{"id": "ü-1", "queue": "очередь", "exception": "🚀 Grüße", "failed_at": "2026-11-30 10:00:00"}]`)
	for _, data := range [][]byte{fixture, raw} {
		want, err := decode("x", bytes.NewReader(data), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for name, r := range map[string]io.Reader{
			"one byte": iotest.OneByteReader(bytes.NewReader(data)),
			"half":     iotest.HalfReader(bytes.NewReader(data)),
		} {
			got, err := decode("x", r, time.UTC)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s reads: %v, entries differ: %v", name, err, fmt.Sprint(got) != fmt.Sprint(want))
			}
		}
	}
	for _, tc := range []struct {
		data string
		at   int
	}{
		{"[\"ü\xff\"]", 4},
		{"[\"\xe2\x82\"]", 2},
		{"[\"ok\xf0\x9f\"]", 4},
		{"[\"ok\xf0\x9f", 4},
		{"[\"\xed\xa0\x80\"]", 2}, // a UTF-16 surrogate written as UTF-8
	} {
		_, err := decode("x", iotest.OneByteReader(strings.NewReader(tc.data)), time.UTC)
		if want := fmt.Sprintf("not valid UTF-8 at byte %d", tc.at); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", tc.data, err, want)
		}
	}
}

// TestReadErrorsAreNamed: an I/O error while reading is reported as such,
// not as bad JSON.
func TestReadErrorsAreNamed(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`[{"id": "a"}`), iotest.ErrReader(io.ErrClosedPipe))
	_, err := decode("f.json", r, time.UTC)
	if err == nil || !strings.Contains(err.Error(), "f.json: io: read/write on closed pipe") {
		t.Errorf("read error: %v", err)
	}
}

// TestRereadAfterARewrite: a read that found the file truncated while
// Laravel rewrote it is taken again; a file that is simply broken is
// reported at once.
func TestRereadAfterARewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "failed-jobs.json")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	testHookDecoded = func() {
		if calls++; calls == 1 {
			write(`[{"id": "a"}, {"id": "b"}]`) // the writer finishes
		}
	}
	defer func() { testHookDecoded = nil }()
	write(`[{"id": "a"}, {"i`) // truncated, mid-write
	s, err := Open(path, nil)
	if err != nil {
		t.Fatalf("after a rewrite: %v", err)
	}
	if s.Len() != 2 || calls != 2 {
		t.Fatalf("after a rewrite: %d entries, %d reads", s.Len(), calls)
	}

	calls = 0
	write("")
	testHookDecoded = func() {
		if calls++; calls == 1 {
			write(`[{"id": "a"}]`) // an empty file was the writer's truncation
		}
	}
	if s, err := Open(path, nil); err != nil || s.Len() != 1 {
		t.Fatalf("after truncation: %v, %+v", err, s)
	}

	calls = 0
	testHookDecoded = func() { calls++ }
	write(`[{"id": "a"}, {"i`)
	if _, err := Open(path, nil); err == nil || calls != 1 {
		t.Fatalf("a stable broken file: %v after %d reads", err, calls)
	}
}
