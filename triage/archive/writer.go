package archive

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// Stdout is the path that names standard output.
const Stdout = "-"

// filePerm keeps an archive private: payloads carry customer data.
const filePerm = 0o600

// Writer appends rows to an archive and makes each batch durable.
type Writer struct {
	path string
	f    *os.File  // the archive file; nil when writing to stdout
	out  io.Writer // where records go
	// syncOut is stdout when it is a regular file (a redirect): fsynced too.
	syncOut *os.File
	gz      bool
	size    int64 // bytes of whole records (or members) in the file
	keys    map[key]struct{}
	now     func() time.Time
	buf     bytes.Buffer
	broken  error

	// Existing counts the records the file held when it was opened.
	Existing int64
	// Cut is the size of the unfinished tail (a batch without its trailer)
	// cut off when the file was opened.
	Cut int64
	// Written: records added; Skipped: rows given that the archive held.
	Written, Skipped int64
}

// Open opens the archive at path for appending, creating it (mode 0600)
// when it does not exist; Stdout ("-") writes to stdout, uncompressed.
// A path ending in ".gz" is written as gzip, one member per batch. An
// existing file is read first: its records are remembered (a row it holds
// is not written again) and an unfinished tail is cut off. The file is locked
// against a second writer until Close.
func Open(path string, stdout io.Writer, now func() time.Time) (*Writer, error) {
	w := &Writer{path: path, now: now, keys: map[key]struct{}{}}
	if path == Stdout {
		w.out = stdout
		if f, ok := stdout.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				w.syncOut = f
			}
		}
		return w, nil
	}
	w.gz = strings.HasSuffix(path, ".gz")
	created := true
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, filePerm)
	if errors.Is(err, fs.ErrExist) {
		created = false
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("archive %s is being written by another process (%v)", path, err)
	}
	w.f, w.out = f, f
	if created {
		// The new name must survive a crash as well as the data.
		if err := syncDir(filepath.Dir(path)); err != nil {
			w.Close()
			return nil, fmt.Errorf("archive %s: %w", path, err)
		}
		return w, nil
	}
	if err := w.load(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// load reads the existing file: its rows' keys and where its whole part
// ends; the unverified tail after it (a batch whose writer died inside
// Write, so none of its rows was deleted) is cut off.
func (w *Writer) load() error {
	st, err := w.f.Stat()
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	if st.Size() == 0 {
		return nil
	}
	r, err := NewReader(w.f)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	r.Name = w.path
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, triage.ErrInvalidInput) {
			return fmt.Errorf("%w; not appending to it", err)
		}
		if err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		w.keys[keyOf(row)] = struct{}{}
		w.Existing++
	}
	// The content decides, not the name: never mix plain lines and gzip.
	w.gz = r.zr != nil
	if r.good < st.Size() {
		w.Cut = st.Size() - r.good
		if err := w.f.Truncate(r.good); err != nil {
			return fmt.Errorf("archive %s: cutting off its unfinished tail: %w", w.path, err)
		}
		if err := w.f.Sync(); err != nil {
			return fmt.Errorf("archive %s: %w", w.path, err)
		}
	}
	if _, err := w.f.Seek(r.good, io.SeekStart); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	w.size = r.good
	return nil
}

// Write appends the rows the archive lacks and their batch's trailer, in
// one write (one gzip member), and fsyncs them before it returns: only
// then may the caller delete them. On an error nothing of
// the batch stays in the file, and the writer refuses further batches.
func (w *Writer) Write(rows []triage.RawRow) error {
	if w.broken != nil {
		return w.broken
	}
	w.buf.Reset()
	at := w.now()
	var fresh []key
	inBatch := map[key]struct{}{}
	for _, r := range rows {
		k := keyOf(r)
		_, had := w.keys[k]
		_, twice := inBatch[k]
		if had || twice {
			w.Skipped++
			continue
		}
		inBatch[k] = struct{}{}
		fresh = append(fresh, k)
		appendRecord(&w.buf, r, k, at)
	}
	if len(fresh) == 0 {
		return nil
	}
	appendTrailer(&w.buf, fresh)
	data := w.buf.Bytes()
	if w.gz {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		if _, err := zw.Write(data); err != nil {
			return w.fail(err)
		}
		if err := zw.Close(); err != nil {
			return w.fail(err)
		}
		data = z.Bytes()
	}
	if _, err := w.out.Write(data); err != nil {
		return w.fail(err)
	}
	if err := w.sync(); err != nil {
		return w.fail(err)
	}
	w.size += int64(len(data))
	for _, k := range fresh {
		w.keys[k] = struct{}{}
	}
	w.Written += int64(len(fresh))
	return nil
}

func (w *Writer) sync() error {
	switch {
	case w.f != nil:
		return w.f.Sync()
	case w.syncOut != nil:
		return w.syncOut.Sync()
	}
	return nil // a pipe or a terminal: nothing to sync
}

// fail cuts the file back to its last whole batch and breaks the writer.
func (w *Writer) fail(err error) error {
	where := w.path
	if w.f != nil {
		if terr := w.f.Truncate(w.size); terr == nil {
			_, _ = w.f.Seek(w.size, io.SeekStart)
			_ = w.f.Sync()
		}
	} else {
		where = "standard output"
	}
	w.broken = fmt.Errorf("archive %s: %w (nothing of the batch was deleted)", where, err)
	return w.broken
}

// Close releases the lock and closes the file (not stdout). A gzip
// archive that got no record is left one empty gzip member, not 0 bytes:
// zcat and gzip -t read it, and restore reads zero records from it.
func (w *Writer) Close() error {
	if w == nil || w.f == nil {
		return nil
	}
	var err error
	if w.gz && w.size == 0 && w.broken == nil {
		err = w.writeEmptyMember()
	}
	if cerr := w.f.Close(); err == nil { // closing drops the flock
		err = cerr
	}
	w.f = nil
	return err
}

// writeEmptyMember writes a gzip member of no data and makes it durable.
func (w *Writer) writeEmptyMember() error {
	var z bytes.Buffer
	if err := gzip.NewWriter(&z).Close(); err != nil {
		return fmt.Errorf("archive %s: %w", w.path, err)
	}
	if _, err := w.f.Write(z.Bytes()); err != nil {
		return fmt.Errorf("archive %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("archive %s: %w", w.path, err)
	}
	w.size = int64(z.Len())
	return nil
}

// syncDir fsyncs a directory: a file created in it survives a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, errSyncUnsupported) {
		return err
	}
	return nil
}
