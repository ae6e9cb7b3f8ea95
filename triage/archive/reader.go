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
)

// readBuffer is a reader's buffer; longer lines are read whole all the same.
const readBuffer = 64 << 10

// gzipMagic opens every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// Reader reads an archive's records, plain or gzip (told by its first
// bytes, so standard input works too). A torn last line — or a torn last
// gzip member — is what a writer killed mid-write leaves: it is not an
// error, and Torn reports it. Any other line that is not a record is.
type Reader struct {
	lines *bufio.Reader
	line  int
	// Torn: the archive ended in a torn line, which was ignored.
	Torn bool
}

// NewReader reads the archive in src.
func NewReader(src io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(src, readBuffer)
	r := &Reader{lines: br}
	magic, err := br.Peek(len(gzipMagic))
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			// Killed while writing the first member's header.
			r.Torn = true
			r.lines = bufio.NewReader(bytes.NewReader(nil))
			return r, nil
		case err != nil:
			return nil, fmt.Errorf("%w: archive: %v", triage.ErrInvalidInput, err)
		}
		r.lines = bufio.NewReaderSize(zr, readBuffer)
	}
	return r, nil
}

// Next returns the next record, or io.EOF after the last.
func (r *Reader) Next() (triage.RawRow, error) {
	for {
		line, err := r.lines.ReadBytes('\n')
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			// A gzip member cut short: its last, partial line goes.
			r.Torn = true
			return triage.RawRow{}, io.EOF
		case err != nil && !errors.Is(err, io.EOF):
			if isCorrupt(err) {
				return triage.RawRow{}, fmt.Errorf("%w: archive: after line %d: %v", triage.ErrInvalidInput, r.line, err)
			}
			return triage.RawRow{}, err
		}
		if len(line) == 0 {
			return triage.RawRow{}, io.EOF
		}
		r.line++
		complete := line[len(line)-1] == '\n'
		text := bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		row, derr := decodeRecord(text)
		if derr != nil {
			if !complete {
				r.Torn = true
				return triage.RawRow{}, io.EOF
			}
			return triage.RawRow{}, fmt.Errorf("%w: archive line %d: %v", triage.ErrInvalidInput, r.line, derr)
		}
		return row, nil
	}
}

// isCorrupt recognises gzip data that is not merely cut short.
func isCorrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce)
}
