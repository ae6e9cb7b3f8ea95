package filestore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/filestore"
)

// FuzzOpen feeds arbitrary files to Open. Open never panics; it fails with
// one line naming the file, or it succeeds exactly when the file is a JSON
// array in UTF-8 (or blank, as Laravel reads it), and then every read
// method agrees with every other. An input that fails is written to
// testdata/fuzz/FuzzOpen; commit it there, and it runs as a seed.
func FuzzOpen(f *testing.F) {
	// One real entry, not the whole fixture: the fuzzer mutates and
	// minimizes small inputs much faster, and the format is the same.
	real := phpFile(entriesOf(f, laravelRows(f))[:1])
	f.Add(real)
	f.Add(real[:len(real)/3])
	f.Add(phpFile([]fileEntry{entry(1, "default", `App\Jobs\A`, "2026-11-30 10:00:00"), {}}))
	for _, s := range []string{
		"", "[]", " \x00\n", "null", `{"id":1}`, "[1,[2,{}],\"x\",null,{}]", "[] []",
		`[{"id":"a","id":"b","ID":"c","payload":{"x":[1]},"failed_at":12,"failed_at_timestamp":"1e3"}]`,
		`[{"failed_at":"2026-02-30 25:61:61","failed_at_timestamp":1e300}]`,
		"[\"\xff\"]", "[\"\\ud800\"]", `[{"exception":"a\n\nNext b\n\nNext "}]`,
	} {
		f.Add([]byte(s))
	}
	loc := time.FixedZone("WIB", 7*3600)
	// One file per process, rewritten by each call: a worker runs its
	// calls one at a time, and a directory per call made minimizing slow.
	path := filepath.Join(f.TempDir(), "failed-jobs.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := filestore.Open(path, loc)
		wantOK := isBlank(data) || (utf8.Valid(data) && json.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("[")))
		if err != nil {
			msg := err.Error()
			if wantOK || !strings.Contains(msg, path) || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("Open: %q (the file is a readable array: %v)", msg, wantOK)
			}
			return
		}
		if !wantOK {
			t.Fatalf("Open accepted a file that is not a JSON array in UTF-8: %q", data)
		}
		checkStore(t, s)
	})
}

// isBlank: only bytes PHP's trim() strips, which Laravel reads as no jobs.
func isBlank(data []byte) bool {
	return len(bytes.TrimLeft(data, " \t\n\r\x00\x0b")) == 0
}

// checkStore checks that a store's read methods agree with each other.
func checkStore(t *testing.T, s *filestore.Store) {
	ctx := context.Background()
	n := int64(s.Len())
	full := collect(t, s, triage.ScanParams{Full: true})
	heads := collect(t, s, triage.ScanParams{})
	asc := collect(t, s, triage.ScanParams{Ascending: true})
	if int64(len(full)) != n || len(heads) != len(full) || len(asc) != len(full) {
		t.Fatalf("%d entries, scans gave %d full, %d heads, %d ascending", n, len(full), len(heads), len(asc))
	}
	if c, err := s.Count(ctx, triage.Filter{}); err != nil || c != n {
		t.Fatalf("count %d, %v, want %d", c, err, n)
	}
	newest := map[string]int64{}
	for i, r := range full {
		if r.ID != n-int64(i) || asc[len(asc)-1-i].ID != r.ID || heads[i].ID != r.ID {
			t.Fatalf("entry %d has id %d (ascending %d, heads %d), want %d", i, r.ID, asc[len(asc)-1-i].ID, heads[i].ID, n-int64(i))
		}
		for _, text := range []string{r.UUID, r.Connection, r.Queue, string(r.Payload), r.Exception} {
			if !utf8.ValidString(text) {
				t.Fatalf("id %d holds invalid UTF-8: %q", r.ID, text)
			}
		}
		h := heads[i]
		if !bytes.Equal(r.Payload, h.Payload) {
			t.Fatalf("id %d: listing payload %d characters of %d, want the whole payload", r.ID, utf8.RuneCount(h.Payload), utf8.RuneCount(r.Payload))
		}
		if h.Exception != triage.TopExceptionHead(r.Exception) {
			t.Fatalf("id %d: exception head %q", r.ID, h.Exception)
		}
		got, err := s.GetFailed(ctx, triage.Ref{ID: r.ID})
		if err != nil || got.UUID != r.UUID || !bytes.Equal(got.Payload, r.Payload) || got.Exception != r.Exception || !got.FailedAt.Equal(r.FailedAt) {
			t.Fatalf("GetFailed(%d): %+v, %v", r.ID, got, err)
		}
		if r.UUID != "" {
			if _, seen := newest[r.UUID]; !seen {
				newest[r.UUID] = r.ID
			}
		}
		if !r.FailedAt.IsZero() {
			// Its own failed_at is inside a window that starts and ends at it.
			at := triage.Filter{Since: r.FailedAt, Until: r.FailedAt, MinID: r.ID, MaxID: r.ID}
			if c, _ := s.Count(ctx, at); c != 1 {
				t.Fatalf("id %d: not inside its own failed_at %v", r.ID, r.FailedAt)
			}
		}
	}
	for uuid, id := range newest {
		got, err := s.GetFailed(ctx, triage.Ref{UUID: uuid})
		if err != nil || got.ID != id {
			t.Fatalf("GetFailed(%q): %+v, %v, want the newest, id %d", uuid, got, err, id)
		}
	}
	if _, err := triage.PruneTotal(s.Prune(ctx, triage.PruneParams{All: true})); !errors.Is(err, filestore.ErrReadOnly) {
		t.Fatalf("flush: %v", err)
	}
}
