package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/memstore"
)

// Reading races with Laravel: FileFailedJobProvider::write is a plain
// file_put_contents, which truncates the file and then writes it, with no
// lock a reader can see. A read that finds the file empty or malformed
// while it changed underneath is taken again, up to readAttempts times.
const (
	readAttempts = 3
	retryDelay   = 50 * time.Millisecond
)

// testHookDecoded (tests) runs after decoding, before the change check.
var testHookDecoded func()

// readFile reads and decodes the file; a missing one is os.ErrNotExist.
func readFile(path string, loc *time.Location) ([]memstore.Row, error) {
	for attempt := 1; ; attempt++ {
		entries, changed, err := readOnce(path, loc)
		if !changed || attempt == readAttempts || (err == nil && len(entries) > 0) {
			return entries, err
		}
		time.Sleep(retryDelay)
	}
}

// readOnce reads the file once; changed: its size or mtime moved meanwhile.
func readOnce(path string, loc *time.Location) (entries []memstore.Row, changed bool, err error) {
	// Stat first: opening a FIFO would block until someone writes to it.
	before, err := os.Stat(path)
	if err != nil {
		return nil, false, fileError(path, err)
	}
	switch {
	case before.IsDir():
		return nil, false, fmt.Errorf("failed-job file %s is a directory (queue.failed.path names the file itself)", showPath(path))
	case !before.Mode().IsRegular():
		return nil, false, fmt.Errorf("failed-job file %s is not a regular file (%s)", showPath(path), before.Mode().Type())
	case before.Size() > MaxFileBytes:
		return nil, false, tooLarge(path, before.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fileError(path, err)
	}
	defer f.Close()
	entries, err = decode(path, f, loc)
	if testHookDecoded != nil {
		testHookDecoded()
	}
	if after, serr := os.Stat(path); serr == nil {
		changed = after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime())
	}
	return entries, changed, err
}

// fileError names the file in an error of os.Stat or os.Open, once: without
// the operation and path os errors repeat (errors.Is still sees the
// cause). A missing file's error stays as it is: Open reads it as no jobs.
func fileError(path string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("failed-job file %s: %w", showPath(path), err)
}

func tooLarge(path string, size int64) error {
	return fmt.Errorf("failed-job file %s is larger than %d MiB (%d bytes); jobtriage refuses to load it",
		showPath(path), MaxFileBytes>>20, size)
}

// showPath quotes path only where it would break a one-line message.
func showPath(path string) string {
	if q := strconv.Quote(path); q[1:len(q)-1] != path {
		return q
	}
	return path
}

// decode reads the array from r. Its elements are decoded one at a time,
// so memory holds the entries and at most one element's raw text.
func decode(path string, r io.Reader, loc *time.Location) ([]memstore.Row, error) {
	cr := &checkedReader{r: r}
	dec := json.NewDecoder(cr)
	malformed := func(err error) error {
		var tl *errTooLarge
		if errors.As(err, &tl) {
			return tooLarge(path, tl.read)
		}
		var bad *errBadUTF8
		if errors.As(err, &bad) {
			return fmt.Errorf("failed-job file %s is not valid UTF-8 at byte %d (Laravel's json_decode rejects it too and reads no failed jobs)",
				showPath(path), bad.offset)
		}
		var rerr *errRead
		if errors.As(err, &rerr) {
			return fmt.Errorf("failed-job file %s: %w", showPath(path), rerr.err)
		}
		off := dec.InputOffset()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = se.Offset
		}
		msg := err.Error()
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			off, msg = cr.n, "unexpected end of file (truncated?)"
		}
		return fmt.Errorf("failed-job file %s is not valid JSON at byte %d: %s", showPath(path), off, oneLine(msg))
	}

	tok, err := dec.Token()
	if err != nil && cr.err == nil && !cr.nonBlank {
		// The decoder stopped at a NUL, or found nothing: read on, since
		// a file of PHP whitespace only is no jobs to Laravel.
		if _, cerr := io.Copy(io.Discard, cr); cerr == nil && !cr.nonBlank {
			return nil, nil
		}
	}
	if err != nil {
		return nil, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("failed-job file %s is not a JSON array of failed jobs (it starts with %s; Laravel reads it as no failed jobs)",
			showPath(path), describe(tok))
	}
	var entries []memstore.Row
	for dec.More() {
		e, err := decodeEntry(dec, loc)
		if err != nil {
			return nil, malformed(err)
		}
		entries = append(entries, e)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, malformed(err)
	}
	end := dec.InputOffset()
	var se *json.SyntaxError
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil && !errors.As(err, &se) {
			return nil, malformed(err)
		}
		return nil, fmt.Errorf("failed-job file %s is not valid JSON at byte %d: data after the array's closing ]", showPath(path), end)
	}
	return entries, nil
}

// describe names a top-level token for an error message.
func describe(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return "'" + t.String() + "'"
	case string:
		return "a string"
	case nil:
		return "null"
	case bool:
		return "a boolean"
	default:
		return "a number"
	}
}

func oneLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// decodeEntry decodes one array element. An object gives an entry with the
// fields it has (names are matched exactly, as PHP does; unknown ones are
// skipped). Anything else is kept as an empty entry, so the ids of the
// entries after it still follow their positions in the file.
func decodeEntry(dec *json.Decoder, loc *time.Location) (memstore.Row, error) {
	var e memstore.Row
	tok, err := dec.Token()
	if err != nil {
		return e, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return e, nil // a scalar element
	}
	if d == '[' {
		return e, skipRest(dec)
	}
	var uuid, connection, queue, payload, exception, failedAt, stamp field
	fields := map[string]*field{"id": &uuid, "connection": &connection, "queue": &queue, "payload": &payload,
		"exception": &exception, "failed_at": &failedAt, "failed_at_timestamp": &stamp}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return e, err
		}
		key, _ := tok.(string)
		var dst json.Unmarshaler = &skip{}
		if f, ok := fields[key]; ok {
			dst = f
		}
		if err := dec.Decode(dst); err != nil {
			return e, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return e, err
	}
	e.UUID, e.Connection, e.Queue, e.Exception = uuid.text(), connection.text(), queue.text(), exception.text()
	e.Payload = payload.s // a payload written as an object, not a string, is still a payload
	e.FailedAt, e.Wall = failedTime(failedAt, stamp, loc)
	return e, nil
}

// skipRest consumes the rest of an array whose '[' was read.
func skipRest(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '[' || d == '{' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// skip discards a value without building it.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

// field is one value of an entry, of whatever JSON type it is.
type field struct {
	kind byte // '"' string, '0' number, 'n' null, 'b' boolean, '{' or '[' structured; 0 absent
	s    string
}

func (f *field) UnmarshalJSON(b []byte) error {
	*f = field{} // a key given twice: the last value stands
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return nil
	}
	switch b[0] {
	case '"':
		f.kind = '"'
		return json.Unmarshal(b, &f.s)
	case 'n':
		f.kind = 'n'
	case 't', 'f':
		f.kind, f.s = 'b', string(b)
	case '{', '[':
		f.kind, f.s = b[0], string(b)
	default:
		f.kind, f.s = '0', string(b)
	}
	return nil
}

// text is a string field's value; a number or boolean is kept as its
// JSON text, null and structured values as "".
func (f field) text() string {
	if f.kind == '{' || f.kind == '[' {
		return ""
	}
	return f.s
}

// Bounds of a failed_at_timestamp that time.Unix and Format handle as a
// four-digit year (0001-01-01 and 9999-12-31 23:59:59 UTC).
const (
	minEpoch = -62135596800
	maxEpoch = 253402300799
)

// failedTime reads failed_at as wall-clock time in loc, falling back to
// failed_at_timestamp (or a numeric failed_at, as the provider's first
// draft wrote it). wall is the Y-m-d H:i:s text filters compare.
func failedTime(failedAt, stamp field, loc *time.Location) (time.Time, string) {
	if failedAt.kind == '"' {
		s := strings.TrimSpace(failedAt.s)
		if t, err := time.ParseInLocation(triage.FailedAtLayout, s, loc); err == nil {
			return t, s
		}
		if t, ok := triage.ParseFailedAt(s, loc); ok {
			t = t.In(loc)
			return t, t.Format(triage.FailedAtLayout)
		}
	}
	for _, f := range []field{stamp, failedAt} {
		if f.kind != '0' && f.kind != '"' {
			continue
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(f.s), 64)
		if err != nil || math.IsNaN(sec) || sec < minEpoch || sec > maxEpoch {
			continue
		}
		whole := math.Floor(sec)
		t := time.Unix(int64(whole), int64((sec-whole)*1e9)).In(loc)
		return t, t.Format(triage.FailedAtLayout)
	}
	return time.Time{}, ""
}

// checkedReader counts bytes, refuses more than MaxFileBytes (the file may
// grow after the size check), checks that the text is UTF-8 (Go's decoder
// would silently replace bad bytes; PHP's refuses the file), and notes
// whether anything but PHP's trim() whitespace was read.
type checkedReader struct {
	r        io.Reader
	n        int64
	nonBlank bool
	carry    []byte // the incomplete UTF-8 sequence that ended the last read
	err      error
}

type (
	errTooLarge struct{ read int64 }
	errBadUTF8  struct{ offset int64 }
	errRead     struct{ err error }
)

func (e *errTooLarge) Error() string { return "file too large" }
func (e *errBadUTF8) Error() string  { return "invalid UTF-8" }
func (e *errRead) Error() string     { return e.err.Error() }

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	start := c.n
	c.n += int64(n)
	if c.n > MaxFileBytes {
		c.err = &errTooLarge{read: c.n}
		return 0, c.err
	}
	if off, ok := c.check(p[:n], start, errors.Is(err, io.EOF)); !ok {
		c.err = &errBadUTF8{offset: off}
		return 0, c.err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = &errRead{err: err}
		return n, c.err
	}
	return n, err
}

// check validates b, which starts at file offset start; at EOF no sequence
// may stay incomplete. It returns the offset of the first bad byte.
func (c *checkedReader) check(b []byte, start int64, eof bool) (int64, bool) {
	buf := b
	base := start
	if len(c.carry) > 0 {
		buf = append(append([]byte(nil), c.carry...), b...)
		base -= int64(len(c.carry))
		c.carry = nil
	}
	for i := 0; i < len(buf); {
		ch := buf[i]
		if ch < utf8.RuneSelf {
			if !c.nonBlank && !phpTrimmed(ch) {
				c.nonBlank = true
			}
			i++
			continue
		}
		c.nonBlank = true
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 {
			if !eof && !utf8.FullRune(buf[i:]) {
				c.carry = append([]byte(nil), buf[i:]...)
				return 0, true
			}
			return base + int64(i), false
		}
		i += size
	}
	return 0, true
}

// phpTrimmed: PHP's trim() strips c (a file of only those is no jobs).
func phpTrimmed(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0 || c == '\x0b'
}
