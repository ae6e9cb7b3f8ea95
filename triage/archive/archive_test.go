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
	"slices"
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
			return out, ar.Cut != nil
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
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	want := `{"schema_version":2,"archived_at":"2026-12-01T02:03:04Z","id":2,"uuid":null,"connection":null,"queue":"","failed_at":null,"payload":null,"exception":"","sum":"`
	if !strings.HasPrefix(lines[0], want) || len(lines[0]) != len(want)+64+2 {
		t.Errorf("record:\n got %s\nwant %s", lines[0], want)
	}
	for _, k := range []string{`"queue_base64":"cf/+"`, `"payload_base64":`, `"exception_base64":"4oI="`, `"uuid":"u-3"`} {
		if !strings.Contains(lines[1], k) {
			t.Errorf("record lacks %s: %s", k, lines[1])
		}
	}
	if !strings.HasPrefix(lines[2], `{"schema_version":2,"trailer":{"records":2,"sum":"`) {
		t.Errorf("no trailer: %s", lines[2])
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
	// A batch whole but for its trailer's newline is not whole: the writer
	// died inside the write.
	if err := os.WriteFile(path, append(append([]byte{}, whole...), bytes.TrimSuffix(next.Bytes(), []byte("\n"))...), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, torn := readFile(t, path); !torn || len(got) != 2 {
		t.Errorf("a last trailer without its newline: torn=%v, %d records", torn, len(got))
	}
	if a := write(t, path, rows); a.Cut != int64(next.Len()-1) || a.Written != 1 {
		t.Errorf("reopen cut %d, written %d", a.Cut, a.Written)
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
		"a newer schema":        strings.Replace(good, `"schema_version":1`, `"schema_version":3`, 1) + "\n",
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

// batches is the archive the writer makes of these batches, as bytes.
func batches(t *testing.T, bs ...[]triage.RawRow) string {
	t.Helper()
	var out bytes.Buffer
	w, err := archive.Open(archive.Stdout, &out, clock)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return out.String()
}

func verify(t *testing.T, in string) (archive.Verified, error) {
	t.Helper()
	return archive.Verify(strings.NewReader(in), "a.ndjson")
}

// laravelRows are rows as Laravel writes them: the uuid is the payload's.
func laravelRows(n int) []triage.RawRow {
	var rows []triage.RawRow
	for i := range n {
		u := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		rows = append(rows, triage.RawRow{ID: int64(i + 1), UUID: s(u), Connection: s("database"), Queue: s("default"),
			FailedAt: s("2026-11-30 10:00:00"), Payload: s(`{"uuid":"` + u + `","job":"x"}`), Exception: s("E")})
	}
	return rows
}

// TestVerifyRefusesAnEditedArchive: every edit that the sums, the trailers
// or the record's own keys show is an error naming the line, and the
// reader returns no row of the batch.
func TestVerifyRefusesAnEditedArchive(t *testing.T) {
	rows := laravelRows(4)
	good := batches(t, rows[:2], rows[2:])
	lines := strings.SplitAfter(good, "\n") // 0,1 records, 2 trailer, 3,4 records, 5 trailer
	v1 := func(l string) string {
		l = strings.Replace(l, `"schema_version":2`, `"schema_version":1`, 1)
		return l[:strings.Index(l, `,"sum":`)] + "}\n"
	}
	join := func(ls ...string) string { return strings.Join(ls, "") }
	cases := map[string]struct {
		in, want string
	}{
		"an edited payload":   {strings.Replace(good, `\"job\":\"x\"`, `\"job\":\"y\"`, 1), "line 1: archive record 1 does not match its sum"},
		"a null uuid":         {strings.Replace(good, `"uuid":"00000000-0000-4000-8000-000000000004"`, `"uuid":null`, 1), "line 5: archive record 4 does not match its sum"},
		"no payload":          {strings.Replace(good, `"payload":"{\"uuid\":\"00000000-0000-4000-8000-000000000002\",\"job\":\"x\"}",`, "", 1), "line 2: archive record 2 has no payload"},
		"reordered":           {join(lines[1], lines[0], lines[2]), "line 3: the batch from line 1 does not match its trailer's checksum"},
		"a record removed":    {join(lines[0], lines[2]), "line 2: the trailer counts 2 records, its batch holds 1"},
		"a record doubled":    {join(lines[0], lines[0], lines[1], lines[2]), "line 4: the trailer counts 2 records, its batch holds 3"},
		"a trailer alone":     {join(lines[0], lines[1], lines[2], lines[2]), "line 4: the trailer counts 2 records, its batch holds 0"},
		"a batch in a batch":  {join(lines[0], lines[3], lines[4], lines[5]), "line 4: the trailer counts 2 records, its batch holds 3"},
		"no sum":              {join(lines[0], v1(lines[1]), lines[2]), "line 2: a record without a sum inside the batch from line 1"},
		"v1 uuid not payload": {strings.Replace(v1(lines[0]), `"uuid":"00000000-0000-4000-8000-000000000001"`, `"uuid":"other"`, 1), `line 1: archive record 1: its uuid "other" is not its payload's`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := verify(t, c.in)
			if !errors.Is(err, triage.ErrInvalidInput) || !strings.Contains(err.Error(), "archive a.ndjson "+c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			// A writer does not append to it either.
			path := filepath.Join(t.TempDir(), "a.ndjson")
			if err := os.WriteFile(path, []byte(c.in), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := archive.Open(path, nil, clock); !errors.Is(err, triage.ErrInvalidInput) {
				t.Errorf("writer: %v", err)
			}
		})
	}
	if v, err := verify(t, good); err != nil || v.Records != 4 || v.Cut != nil || v.Unverified != 0 {
		t.Errorf("the whole archive: %+v %v", v, err)
	}
}

// TestVerifyFindsTheCut: an archive cut anywhere after its first batch is
// its whole batches and a Cut naming where the unverified tail starts;
// the reader never returns a row of that tail.
func TestVerifyFindsTheCut(t *testing.T) {
	rows := laravelRows(5)
	for _, gz := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), map[bool]string{false: "a.ndjson", true: "a.ndjson.gz"}[gz])
		write(t, path, rows[:2], rows[2:])
		raw, _ := os.ReadFile(path)
		first := filepath.Join(t.TempDir(), filepath.Base(path))
		write(t, first, rows[:2])
		head, _ := os.ReadFile(first)
		for cut := len(head) + 1; cut < len(raw); cut++ {
			v, err := archive.Verify(bytes.NewReader(raw[:cut]), "x")
			if err != nil || v.Records != 2 || v.Cut == nil || v.Cut.Line != 4 && v.Cut.Records > 0 || v.Cut.Records > 3 {
				t.Fatalf("gzip %v, cut at %d of %d: %+v %+v %v", gz, cut, len(raw), v, v.Cut, err)
			}
			if got, torn := readAll(t, bytes.NewReader(raw[:cut])); !torn || !reflect.DeepEqual(got, rows[:2]) {
				t.Fatalf("gzip %v, cut at %d: read %d rows", gz, cut, len(got))
			}
		}
		// Cut in half: the verified part is the first batch.
		if v, _ := archive.Verify(bytes.NewReader(raw[:len(raw)/2]), "x"); v.Cut == nil || v.Records > 2 {
			t.Errorf("gzip %v cut in half: %+v", gz, v)
		}
	}
}

// TestVersion1ArchivesStillRead: records without sums are read and
// counted; a torn last line is a cut.
func TestVersion1ArchivesStillRead(t *testing.T) {
	rec := `{"schema_version":1,"archived_at":"2026-12-01T02:03:04Z","id":7,"uuid":"x","connection":"c","queue":"q","failed_at":"t","payload":"p","exception":"e"}`
	other := strings.Replace(rec, `"id":7,"uuid":"x"`, `"id":8,"uuid":"y"`, 1)
	v, err := verify(t, rec+"\n"+other+"\n")
	if err != nil || v.Records != 2 || v.Unverified != 2 || v.Cut != nil {
		t.Errorf("v1: %+v %v", v, err)
	}
	v, err = verify(t, rec+"\n"+other[:30])
	if err != nil || v.Records != 1 || v.Cut == nil || *v.Cut != (archive.Cut{Line: 2}) {
		t.Errorf("v1 torn: %+v %v", v, err)
	}
	// A version 2 batch after them, as a writer of today appends.
	rows := laravelRows(1)
	if v, err = verify(t, rec+"\n"+batches(t, rows)); err != nil || v.Records != 2 || v.Unverified != 1 {
		t.Errorf("v1 then v2: %+v %v", v, err)
	}
}

// TestVerifyNamesConflictsAndNullUUIDs: a uuid two records carry with
// different content is named; one archived again under a new id is not a
// conflict.
func TestVerifyNamesConflictsAndNullUUIDs(t *testing.T) {
	rows := laravelRows(2)
	changed, moved := rows[0], rows[0]
	changed.Exception = s("another")
	moved.ID = 99
	nullUUID := triage.RawRow{ID: 5, Payload: s(`{"job":"legacy"}`)}
	v, err := verify(t, batches(t, rows, []triage.RawRow{moved, changed, nullUUID}))
	if err != nil || v.Records != 5 || v.NullUUID != 6 ||
		!reflect.DeepEqual(v.Conflicts, []archive.Conflict{{UUID: *rows[0].UUID, Line: 5, FirstLine: 1}}) {
		t.Errorf("%+v %v", v, err)
	}
}

// TestWriterCutsABatchWithoutItsTrailer: the records of a batch whose
// trailer never reached the file were never deleted: the next writer cuts
// them off and writes them again, it does not count them as archived.
func TestWriterCutsABatchWithoutItsTrailer(t *testing.T) {
	rows := laravelRows(3)
	path := filepath.Join(t.TempDir(), "a.ndjson")
	write(t, path, rows[:1])
	lines := strings.SplitAfter(batches(t, rows[1:]), "\n")
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(lines[0] + lines[1]) // two whole records, no trailer
	f.Close()
	w := write(t, path, rows)
	if w.Cut != int64(len(lines[0]+lines[1])) || w.Existing != 1 || w.Written != 2 || w.Skipped != 1 {
		t.Fatalf("cut %d existing %d written %d skipped %d", w.Cut, w.Existing, w.Written, w.Skipped)
	}
	if got, torn := readFile(t, path); torn || !reflect.DeepEqual(got, rows) {
		t.Fatalf("torn %v, %d rows", torn, len(got))
	}
}

// FuzzReader: whatever the bytes, reading never panics, and a row of a
// verified batch is one the writer wrote (only a record of format 1,
// counted as unverified, is taken on trust).
func FuzzReader(f *testing.F) {
	rows := append(laravelRows(3), hostileRows()...)
	var plain bytes.Buffer
	w, _ := archive.Open(archive.Stdout, &plain, clock)
	_ = w.Write(rows[:2])
	_ = w.Write(rows[2:])
	f.Add(plain.Bytes())
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain.Bytes())
	zw.Close()
	f.Add(z.Bytes())
	f.Add([]byte(`{"schema_version":1,"archived_at":"x","id":1,"uuid":"u","connection":null,"queue":"q","failed_at":null,"payload":"{\"uuid\":\"u\"}","exception":"e"}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := archive.NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		var got []triage.RawRow
		for {
			row, err := r.Next()
			if err != nil {
				break
			}
			got = append(got, row)
		}
		if r.Unverified > 0 {
			return
		}
		for _, g := range got {
			if !slices.ContainsFunc(rows, func(o triage.RawRow) bool { return reflect.DeepEqual(g, o) }) {
				t.Fatalf("a verified row the writer never wrote: %+v", g)
			}
		}
	})
}
