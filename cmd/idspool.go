package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/jobtriage/jobtriage/triage"
)

// spool keeps what a bulk action touched (ids, skipped jobs) in a temporary
// file instead of memory, for the audit line and --json: retry all of a
// million jobs would otherwise hold a million ids or skips until it ends.
// Each line is one JSON value, so database text cannot break the framing. A
// temporary file that fails (TMPDIR full) moves the spool into memory: a
// retry is never aborted part-way for want of a place to list what it did.
type spool struct {
	f       spoolFile // nil: in memory, in mem
	mem     []byte
	pending []byte // values not yet written
	size    int64  // bytes of f known to be written
	n       int
}

// spoolFile is the temporary file.
type spoolFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
}

// spoolChunk is how much a spool gathers before writing to its file.
const spoolChunk = 64 << 10

// liveSpools are the temporary files of the spools not closed yet, so that
// an exit that skips deferred clean-ups (exitInterrupted) removes them.
var liveSpools = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// removeSpools removes every spool's temporary file.
func removeSpools() {
	liveSpools.Lock()
	defer liveSpools.Unlock()
	for name := range liveSpools.names {
		os.Remove(name)
	}
}

// newSpool makes the temporary file; where none can be (read-only TMPDIR) it is in memory.
func newSpool() *spool {
	tmp, err := os.CreateTemp("", "jobtriage-spool-*")
	if err != nil {
		return &spool{}
	}
	liveSpools.Lock()
	liveSpools.names[tmp.Name()] = true
	liveSpools.Unlock()
	return &spool{f: tmp}
}

// add appends one value as a line of JSON, made inert as every JSON output
// is (marshalJSON): it is spliced into --json output and the audit line.
func (s *spool) add(v any) error {
	b, err := marshalJSON(v, "")
	if err != nil {
		return err
	}
	s.pending = append(s.pending, b...)
	s.n++
	if len(s.pending) >= spoolChunk {
		return s.flush()
	}
	return nil
}

// flush writes the pending values to the file, or to memory. When the file
// fails, what it held and the pending values move to memory (toMemory).
func (s *spool) flush() error {
	if s.f == nil {
		s.mem, s.pending = append(s.mem, s.pending...), s.pending[:0]
		return nil
	}
	if _, err := s.f.WriteAt(s.pending, s.size); err != nil {
		return s.toMemory(err)
	}
	s.size += int64(len(s.pending))
	s.pending = s.pending[:0]
	return nil
}

// toMemory replaces a failed temporary file by memory: what it held (s.size;
// a partial last write is dropped) is read back, the pending values after.
func (s *spool) toMemory(cause error) error {
	mem := make([]byte, s.size)
	if _, err := io.ReadFull(io.NewSectionReader(s.f, 0, s.size), mem); err != nil {
		return fmt.Errorf("recording the jobs touched: the temporary file failed (%v) and could not be read back: %w", cause, err)
	}
	s.closeFile()
	s.f, s.mem = nil, mem
	return s.flush()
}

// AddIDs records a batch's ids.
func (s *spool) AddIDs(ids []string) error {
	for _, id := range ids {
		if err := s.add(id); err != nil {
			return err
		}
	}
	return s.flush()
}

// Len is the number of values recorded.
func (s *spool) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// writeArray writes the values as the elements of a JSON array (without the
// brackets), each after sep; objects are indented to sep's depth.
func (s *spool) writeArray(w io.Writer, sep string) error {
	if err := s.flush(); err != nil {
		return err
	}
	var r io.Reader = bytes.NewReader(s.mem)
	if s.f != nil {
		r = io.NewSectionReader(s.f, 0, s.size)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	var ind bytes.Buffer
	for first := true; sc.Scan(); first = false {
		lead := sep
		if !first {
			lead = "," + sep
		}
		if _, err := io.WriteString(w, lead); err != nil {
			return err
		}
		line := sc.Bytes()
		if sep != "" && len(line) > 0 && line[0] == '{' {
			ind.Reset()
			if err := json.Indent(&ind, line, strings.TrimPrefix(sep, "\n"), "  "); err == nil {
				line = ind.Bytes()
			}
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading back the jobs touched: %w", err)
	}
	return nil
}

// reset empties the spool.
func (s *spool) reset() error {
	s.mem, s.pending, s.size, s.n = s.mem[:0], s.pending[:0], 0, 0
	if s.f != nil {
		return s.f.Truncate(0)
	}
	return nil
}

// Close removes the file.
func (s *spool) Close() {
	if s != nil {
		s.closeFile()
	}
}

// closeFile closes and removes the temporary file, if there is one.
func (s *spool) closeFile() {
	if f, ok := s.f.(*os.File); ok {
		f.Close()
		os.Remove(f.Name())
		liveSpools.Lock()
		delete(liveSpools.names, f.Name())
		liveSpools.Unlock()
	}
}

// skipReport takes a bulk action's skipped jobs: all to a spool (--json), and
// in memory only what the terminal shows, per reason a count and a few ids.
type skipReport struct {
	all    *spool
	groups map[string]*skipGroup
	order  []string
}

type skipGroup struct {
	reason string
	ids    []string
	n      int
	// artisan are the ids to hand to php artisan queue:retry, for skips
	// jobtriage cannot write but artisan can (up to maxArtisanIDs).
	artisan []string
}

// maxArtisanIDs bounds the ids of the printed artisan command, skipExamples
// those a reason lists; --json lists every skipped job.
const (
	maxArtisanIDs = 100
	skipExamples  = 3
)

func newSkipReport() *skipReport {
	return &skipReport{all: newSpool(), groups: map[string]*skipGroup{}}
}

// Add records a batch's skips.
func (r *skipReport) Add(skips []triage.Skip) error {
	for _, s := range skips {
		key := s.Code + "\x00" + s.Connection
		if s.Code == triage.SkipMalformed || s.Code == "" {
			key = s.Reason
		}
		g, ok := r.groups[key]
		if !ok {
			g = &skipGroup{reason: s.Reason}
			r.groups[key] = g
			r.order = append(r.order, key)
		}
		g.n++
		if len(g.ids) < skipExamples {
			g.ids = append(g.ids, s.ID)
		}
		if triage.ArtisanCan(s.Code) && len(g.artisan) < maxArtisanIDs {
			g.artisan = append(g.artisan, s.ID)
		}
		if err := r.all.add(s); err != nil {
			return err
		}
	}
	return r.all.flush()
}

// reset forgets every skip: the real run after a preview reports its own.
func (r *skipReport) reset() error {
	*r = skipReport{all: r.all, groups: map[string]*skipGroup{}}
	return r.all.reset()
}

// Len is the number of jobs skipped.
func (r *skipReport) Len() int { return r.all.Len() }

// writeJSONSpliced is writeJSON for a result whose array members named in
// spools (empty arrays when v is encoded) are streamed from those spools.
func writeJSONSpliced(w io.Writer, v any, spools map[string]*spool) error {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	out := buf.Bytes()
	type cut struct {
		at     int
		member string
		s      *spool
	}
	var cuts []cut
	for name, s := range spools {
		member := "\n  \"" + name + "\": []"
		if at := bytes.Index(out, []byte(member)); at >= 0 && s.Len() > 0 {
			cuts = append(cuts, cut{at, member, s})
		}
	}
	slices.SortFunc(cuts, func(a, b cut) int { return a.at - b.at }) // in the order they appear
	bw := bufio.NewWriter(w)
	from := 0
	for _, c := range cuts {
		bw.Write(out[from:c.at])                   //nolint:errcheck // Flush reports it
		bw.WriteString(c.member[:len(c.member)-1]) //nolint:errcheck
		if err := c.s.writeArray(bw, "\n    "); err != nil {
			return err
		}
		bw.WriteString("\n  ]") //nolint:errcheck
		from = c.at + len(c.member)
	}
	bw.Write(out[from:]) //nolint:errcheck
	return bw.Flush()
}
