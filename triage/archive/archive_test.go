package archive_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
)

func s(v string) *string { return &v }

var clock = func() time.Time { return time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC) }

// hostileRows are rows whose bytes a careless encoder would change.
func hostileRows() []triage.RawRow {
	return []triage.RawRow{
		{ID: 1, UUID: s("6f1c0a52-0000-4000-8000-000000000001"), Connection: s("database"), Queue: s("default"),
			FailedAt: s("2026-11-30 10:00:00"), Payload: s(`{"uuid":"6f1c","data":{"command":"O:8:\"App\\Job\":1:{s:4:\"\u0000*\u0000x\";}"},"html":"<a href='x'>&amp;</a>"}`),
			Exception: s("RuntimeException: boom\n#0 /app/x.php(1)\n\nNext Exception: \x1b[31mred\x1b[0m \u2028 end")},
		// NULLs where a poison row has them; an empty string is not NULL.
		{ID: 2, UUID: nil, Connection: nil, Queue: s(""), FailedAt: nil, Payload: nil, Exception: s("")},
		// Bytes that are not UTF-8 (SQLite keeps them), and a NUL.
		{ID: -3, UUID: s("u-3"), Connection: s("redis"), Queue: s("q\xff\xfe"), FailedAt: s("2026-11-30 10:00:01.5"),
			Payload: s("{\"uuid\":\"u-3\",\"bin\":\"\xc3\x28\x00\"}"), Exception: s("\xe2\x82")},
	}
}

func readAll(t *testing.T, r io.Reader) ([]triage.RawRow, bool) {
	t.Helper()
	ar, err := archive.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var out []triage.RawRow
	for {
		row, err := ar.Next()
		if errors.Is(err, io.EOF) {
			return out, ar.Torn
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
}

func readFile(t *testing.T, path string) ([]triage.RawRow, bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readAll(t, f)
}

func write(t *testing.T, path string, batches ...[]triage.RawRow) *archive.Writer {
	t.Helper()
	w, err := archive.Open(path, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range batches {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestRoundTripIsByteFaithful(t *testing.T) {
	for _, name := range []string{"a.ndjson", "a.ndjson.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			rows := hostileRows()
			w := write(t, path, rows[:1], rows[1:])
			if w.Written != 3 || w.Skipped != 0 {
				t.Fatalf("written %d skipped %d", w.Written, w.Skipped)
			}
			got, torn := readFile(t, path)
			if torn {
				t.Error("a whole archive reads as torn")
			}
			if !reflect.DeepEqual(got, rows) {
				t.Fatalf("read back differs:\n got %#v\nwant %#v", got, rows)
			}
			raw, _ := os.ReadFile(path)
			if gz := bytes.HasPrefix(raw, []byte{0x1f, 0x8b}); gz != strings.HasSuffix(name, ".gz") {
				t.Errorf("gzip = %v for %s", gz, name)
			}
			if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600: payloads carry customer data", st.Mode().Perm())
			}
		})
	}
}

func TestRecordFormat(t *testing.T) {
	var out bytes.Buffer
	w, err := archive.Open(archive.Stdout, &out, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(hostileRows()[1:]); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	want := `{"schema_version":1,"archived_at":"2026-12-01T02:03:04Z","id":2,"uuid":null,"connection":null,"queue":"","failed_at":null,"payload":null,"exception":""}`
	if lines[0] != want {
		t.Errorf("record:\n got %s\nwant %s", lines[0], want)
	}
	for _, k := range []string{`"queue_base64":"cf/+"`, `"payload_base64":`, `"exception_base64":"4oI="`, `"uuid":"u-3"`} {
		if !strings.Contains(lines[1], k) {
			t.Errorf("record lacks %s: %s", k, lines[1])
		}
	}
}

func TestReopenSkipsRowsAlreadyArchived(t *testing.T) {
	for _, name := range []string{"a.ndjson", "a.ndjson.gz"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), name)
			rows := hostileRows()
			write(t, path, rows[:2])
			// A re-run archives the same batch again, and a new row.
			w := write(t, path, rows)
			if w.Existing != 2 || w.Written != 1 || w.Skipped != 2 {
				t.Errorf("existing %d written %d skipped %d; want 2, 1, 2", w.Existing, w.Written, w.Skipped)
			}
			got, _ := readFile(t, path)
			if !reflect.DeepEqual(got, rows) {
				t.Fatalf("after the re-run the archive holds %d records, want each of 3 once", len(got))
			}
			// The same row twice in one batch is written once; a row that
			// differs in one byte is another row.
			changed := rows[0]
			changed.Payload = s(*rows[0].Payload + " ")
			w = write(t, path, []triage.RawRow{changed, changed})
			if w.Written != 1 || w.Skipped != 1 {
				t.Errorf("written %d skipped %d; want 1, 1", w.Written, w.Skipped)
			}
		})
	}
}

func TestTornPlainTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.ndjson")
	rows := hostileRows()
	write(t, path, rows[:2])
	whole, _ := os.ReadFile(path)
	// SIGKILL in the middle of the next batch's write.
	var next bytes.Buffer
	w, _ := archive.Open(archive.Stdout, &next, clock)
	if err := w.Write(rows[2:]); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, next.Len() / 2, next.Len() - 2} {
		if err := os.WriteFile(path, append(append([]byte{}, whole...), next.Bytes()[:cut]...), 0o600); err != nil {
			t.Fatal(err)
		}
		got, torn := readFile(t, path)
		if !torn || !reflect.DeepEqual(got, rows[:2]) {
			t.Fatalf("cut at %d: torn=%v, %d records", cut, torn, len(got))
		}
		a := write(t, path, rows)
		if a.Cut != int64(cut) || a.Existing != 2 || a.Written != 1 {
			t.Errorf("cut at %d: reopen cut %d, existing %d, written %d", cut, a.Cut, a.Existing, a.Written)
		}
		got, torn = readFile(t, path)
		if torn || !reflect.DeepEqual(got, rows) {
			t.Fatalf("cut at %d: after the re-run torn=%v, %d records", cut, torn, len(got))
		}
	}
	// A record whole but for its newline is read, and the writer redoes it.
	if err := os.WriteFile(path, append(append([]byte{}, whole...), bytes.TrimSuffix(next.Bytes(), []byte("\n"))...), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, torn := readFile(t, path); torn || len(got) != 3 {
		t.Errorf("a last record without its newline: torn=%v, %d records", torn, len(got))
	}
}

func TestTornGzipTail(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.ndjson.gz")
	rows := hostileRows()
	write(t, path, rows[:1], rows[1:2])
	whole, _ := os.ReadFile(path)
	other := filepath.Join(dir, "b.gz")
	write(t, other, rows[2:])
	member, _ := os.ReadFile(other)
	for cut := 1; cut < len(member); cut += 7 {
		if err := os.WriteFile(path, append(append([]byte{}, whole...), member[:cut]...), 0o600); err != nil {
			t.Fatal(err)
		}
		// A cut in the member's trailer leaves its records whole: they
		// may be read (a restore skips what is in failed_jobs).
		got, torn := readFile(t, path)
		if !torn || !(reflect.DeepEqual(got, rows[:2]) || reflect.DeepEqual(got, rows)) {
			t.Fatalf("cut at %d of %d: torn=%v, %d records", cut, len(member), torn, len(got))
		}
		a := write(t, path, rows)
		if a.Cut != int64(cut) || a.Existing != 2 || a.Written != 1 {
			t.Fatalf("cut at %d: reopen cut %d, existing %d, written %d", cut, a.Cut, a.Existing, a.Written)
		}
		if got, torn := readFile(t, path); torn || !reflect.DeepEqual(got, rows) {
			t.Fatalf("cut at %d: after the re-run torn=%v, %d records", cut, torn, len(got))
		}
	}
	// Killed inside the very first member's header.
	if err := os.WriteFile(path, member[:4], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, torn := readFile(t, path); !torn || len(got) != 0 {
		t.Errorf("torn first header: torn=%v, %d records", torn, len(got))
	}
}

func TestReaderRefusesWhatIsNotAnArchive(t *testing.T) {
	good := `{"schema_version":1,"archived_at":"2026-12-01T02:03:04Z","id":7,"uuid":"x","connection":"c","queue":"q","failed_at":"t","payload":"p","exception":"e"}`
	cases := map[string]string{
		"a line in the middle":  good + "\nnot json\n" + good + "\n",
		"a newer schema":        strings.Replace(good, `"schema_version":1`, `"schema_version":2`, 1) + "\n",
		"no id":                 strings.Replace(good, `"id":7,`, "", 1) + "\n",
		"an unknown field":      strings.Replace(good, `"id":7,`, `"id":7,"extra":1,`, 1) + "\n",
		"text and base64":       strings.Replace(good, `"queue":"q"`, `"queue":"q","queue_base64":"cQ=="`, 1) + "\n",
		"bad base64":            strings.Replace(good, `"queue":"q"`, `"queue_base64":"!!"`, 1) + "\n",
		"two objects on a line": good + good + "\n",
		"corrupt gzip":          string(corruptGzip(t, good)),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			ar, err := archive.NewReader(strings.NewReader(in))
			for err == nil {
				_, err = ar.Next()
			}
			if !errors.Is(err, triage.ErrInvalidInput) {
				t.Fatalf("error %v, want ErrInvalidInput", err)
			}
		})
	}
	// Blank lines are fine.
	got, torn := readAll(t, strings.NewReader("\n"+good+"\n\n"))
	if len(got) != 1 || torn || got[0].ID != 7 {
		t.Errorf("blank lines: %v %v", got, torn)
	}
}

func corruptGzip(t *testing.T, line string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	fmt.Fprintln(zw, line)
	zw.Close()
	raw := b.Bytes()
	raw[len(raw)-5] ^= 0xff // the CRC
	return raw
}

func TestWriterRefusesAForeignFileAndASecondWriter(t *testing.T) {
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("shopping list\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := archive.Open(foreign, nil, clock); !errors.Is(err, triage.ErrInvalidInput) {
		t.Errorf("foreign file: %v", err)
	}
	if b, _ := os.ReadFile(foreign); string(b) != "shopping list\n" {
		t.Errorf("the foreign file changed: %q", b)
	}
	path := filepath.Join(dir, "a.ndjson")
	w, err := archive.Open(path, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := archive.Open(path, nil, clock); err == nil || !strings.Contains(err.Error(), "another process") {
		t.Errorf("second writer: %v", err)
	}
	if _, err := archive.Open(filepath.Join(dir, "missing", "a.ndjson"), nil, clock); err == nil {
		t.Error("a file in a missing directory opened")
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	if f.n > 1 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriteErrorBreaksTheWriter(t *testing.T) {
	w, err := archive.Open(archive.Stdout, &failingWriter{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	rows := hostileRows()
	if err := w.Write(rows[:1]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rows[1:]); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("write error: %v", err)
	}
	if err := w.Write(rows[:1]); err == nil {
		t.Error("a broken writer accepted another batch")
	}
	if w.Written != 1 {
		t.Errorf("written %d, want 1", w.Written)
	}
}

// TestEmptyGzipArchiveIsValidGzip: a .gz archive that got no record is an
// empty gzip member, which gzip readers accept, not a 0-byte file; the
// next run appends to it.
func TestEmptyGzipArchiveIsValidGzip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.ndjson.gz")
	w, err := archive.Open(path, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil || len(raw) == 0 {
		t.Fatalf("empty archive: %v, %d bytes", err, len(raw))
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	if b, err := io.ReadAll(zr); err != nil || len(b) != 0 {
		t.Errorf("gzip content %q, %v", b, err)
	}
	w, err = archive.Open(path, nil, clock)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(hostileRows()[:1]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rows, torn := readAll(t, f); len(rows) != 1 || torn {
		t.Errorf("after appending: %d rows, torn %v", len(rows), torn)
	}
}
