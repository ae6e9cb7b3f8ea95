package archive

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// readBuffer is a reader's buffer; longer lines are read whole all the same.
const readBuffer = 64 << 10

// gzipMagic opens every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// errTorn: the input ends inside a line or a gzip member.
var errTorn = errors.New("torn")

// Cut is an archive's unverified tail: a batch without its trailer (or a
// gzip member without its end), or a torn last line, after the last whole
// batch. Its rows are never returned.
type Cut struct {
	Line    int `json:"line"`    // where the tail starts
	Records int `json:"records"` // the whole records in it
}

// Reader reads an archive's records, plain or gzip (told by its first
// bytes, so standard input works too), and returns the rows of the batches
// it verified whole: each record against its sum, each batch against its
// trailer. Version 1 records, which carry neither, are returned as they
// are and counted. Anything else that is not a record is an error.
type Reader struct {
	// Name is the archive's name in errors ("" leaves it out).
	Name string
	// Line is the line of the record Next returned last.
	Line int
	// Unverified counts the version 1 records returned.
	Unverified int64
	// Cut is the tail after the last whole batch, once Next has returned
	// io.EOF; nil when the archive ends whole.
	Cut *Cut

	cr    *countingReader
	in    *bufio.Reader // the input
	zr    *gzip.Reader  // nil: plain
	lines *bufio.Reader // the text: in, or a gzip member's
	// member: a gzip member is open.
	member bool
	line   int
	off    int64 // plain: the bytes of the lines read
	// good is where the input's whole part ends: a writer appends there.
	good int64
	// batch holds the records since the last trailer; whole, in gzip, the
	// verified ones of a member that has not ended yet; ready what Next returns.
	batch, whole, ready []held
	done                bool
}

type held struct {
	row  triage.RawRow
	key  key
	line int
}

// NewReader reads the archive in src.
func NewReader(src io.Reader) (*Reader, error) {
	r := &Reader{cr: &countingReader{r: src}}
	r.in = bufio.NewReaderSize(r.cr, readBuffer)
	r.lines = r.in
	magic, err := r.in.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if bytes.Equal(magic, gzipMagic) {
		r.zr, r.lines = new(gzip.Reader), bufio.NewReaderSize(nil, readBuffer)
	}
	return r, nil
}

// Next returns the next verified row, or io.EOF after the last.
func (r *Reader) Next() (triage.RawRow, error) {
	for len(r.ready) == 0 {
		if r.done {
			return triage.RawRow{}, io.EOF
		}
		text, err := r.readLine()
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, errTorn):
			r.done = true
			if tail := append(r.whole, r.batch...); len(tail) > 0 {
				r.Cut = &Cut{Line: tail[0].line, Records: len(tail)}
			} else if errors.Is(err, errTorn) {
				r.Cut = &Cut{Line: r.line + 1}
			}
			continue
		case err != nil:
			return triage.RawRow{}, err
		}
		if err := r.take(text); err != nil {
			return triage.RawRow{}, r.invalid("line %d: %v", r.line, err)
		}
		if r.zr == nil && len(r.batch) == 0 {
			r.good = r.off
		}
	}
	h := r.ready[0]
	r.ready = r.ready[1:]
	r.Line = h.line
	return h.row, nil
}

// take files one line's record, or ends its batch.
func (r *Reader) take(text []byte) error {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil
	}
	d, err := decodeLine(text)
	switch {
	case err != nil:
		return err
	case d.trailer != nil:
		keys := make([]key, len(r.batch))
		for i, h := range r.batch {
			keys[i] = h.key
		}
		switch {
		case len(keys) == 0 || d.trailer.Records != len(keys):
			return fmt.Errorf("the trailer counts %d records, its batch holds %d: records removed or added", d.trailer.Records, len(keys))
		case d.trailer.Sum != batchSum(keys):
			return fmt.Errorf("the batch from line %d does not match its trailer's checksum: records reordered or replaced", r.batch[0].line)
		}
		r.release(r.batch...)
		r.batch = nil
	case d.sum == nil && len(r.batch) > 0:
		return fmt.Errorf("a record without a sum inside the batch from line %d", r.batch[0].line)
	case d.sum == nil:
		r.Unverified++
		r.release(held{row: d.row, line: r.line})
	default:
		r.batch = append(r.batch, held{row: d.row, key: *d.sum, line: r.line})
	}
	return nil
}

// release passes verified records on: at once from a plain archive, at
// their member's end from gzip (a member cut short was never written whole).
func (r *Reader) release(hs ...held) {
	if r.zr != nil {
		r.whole = append(r.whole, hs...)
	} else {
		r.ready = append(r.ready, hs...)
	}
}

// readLine returns the next line without its newline: io.EOF at the end,
// errTorn when the input ends inside a line or a gzip member.
func (r *Reader) readLine() ([]byte, error) {
	for {
		if r.zr != nil && !r.member {
			switch err := r.zr.Reset(r.in); {
			case errors.Is(err, io.EOF):
				return nil, io.EOF
			case errors.Is(err, io.ErrUnexpectedEOF):
				return nil, errTorn
			case err != nil:
				return nil, r.invalid("after line %d: %v", r.line, err)
			}
			r.zr.Multistream(false)
			r.lines.Reset(r.zr)
			r.member = true
		}
		b, err := r.lines.ReadBytes('\n')
		switch {
		case err == nil:
			r.line++
			r.off += int64(len(b))
			return b[:len(b)-1], nil
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF) && len(b) > 0:
			return nil, errTorn
		case !errors.Is(err, io.EOF) && isCorrupt(err):
			return nil, r.invalid("after line %d: %v", r.line, err)
		case !errors.Is(err, io.EOF):
			return nil, err
		case r.zr == nil:
			return nil, io.EOF
		}
		// A gzip member ended whole: its verified records may go, unless
		// a batch runs on into the next member (the whole part ends here).
		r.member = false
		if len(r.batch) == 0 {
			r.ready, r.whole = append(r.ready, r.whole...), nil
			r.good = r.cr.n - int64(r.in.Buffered())
		}
	}
}

func (r *Reader) invalid(format string, args ...any) error {
	name := "archive"
	if r.Name != "" {
		name += " " + sanitize.Line(r.Name)
	}
	return fmt.Errorf("%w: %s %s", triage.ErrInvalidInput, name, fmt.Sprintf(format, args...))
}

// isCorrupt recognises gzip data that is not merely cut short.
func isCorrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce)
}

// countingReader counts the bytes read, so each gzip member's end is known
// (the bufio.Reader above it is flate's io.ByteReader: no read-ahead).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Conflict is a uuid two records carry with different content.
type Conflict struct {
	UUID      string `json:"uuid"`
	Line      int    `json:"line"`       // the record not restored
	FirstLine int    `json:"first_line"` // the one restored
}

// Verified is what Verify found in a whole archive.
type Verified struct {
	Records    int64 // rows Next returns
	Unverified int64 // of them, version 1 records
	Cut        *Cut
	Conflicts  []Conflict
	// NullUUID is the line of the first record whose uuid is null (0: none).
	NullUUID int
	// NullLine is the line of the first record with NullColumn null, one
	// of the columns every Laravel failed_jobs declares NOT NULL (0: none).
	NullLine   int
	NullColumn string
}

// Verify reads the archive in src to its end, as a restore does before it
// writes anything: the first record or batch that fails its check is the
// error, naming its line.
func Verify(src io.Reader, name string) (Verified, error) {
	var v Verified
	r, err := NewReader(src)
	if err != nil {
		return v, err
	}
	r.Name = name
	type first struct {
		key  key
		line int
	}
	seen := map[string]first{}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			v.Unverified, v.Cut = r.Unverified, r.Cut
			return v, nil
		}
		if err != nil {
			return v, err
		}
		v.Records++
		if v.NullLine == 0 {
			for _, c := range []struct {
				name string
				val  *string
			}{{"connection", row.Connection}, {"queue", row.Queue}, {"failed_at", row.FailedAt}, {"payload", row.Payload}, {"exception", row.Exception}} {
				if c.val == nil {
					v.NullLine, v.NullColumn = r.Line, c.name
					break
				}
			}
		}
		if row.UUID == nil {
			if v.NullUUID == 0 {
				v.NullUUID = r.Line
			}
			continue
		}
		c := row
		c.ID = 0 // a row restored under a new id and archived again is the same job
		k := keyOf(c)
		if f, ok := seen[*row.UUID]; !ok {
			seen[*row.UUID] = first{k, r.Line}
		} else if f.key != k {
			v.Conflicts = append(v.Conflicts, Conflict{UUID: *row.UUID, Line: r.Line, FirstLine: f.line})
		}
	}
}
