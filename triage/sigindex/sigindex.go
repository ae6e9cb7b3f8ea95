// Package sigindex is a local, incremental index of each failed job's error
// signature, kept in the user's cache directory, so that grouping a large
// failed_jobs table the second time reads only what changed: the rows above
// the highest id already indexed, and the live ids (an index-only scan), so
// that rows deleted or retried by anyone drop out.
//
// Rows in failed_jobs are append-only (Laravel never updates one, and ids
// only grow), so a row's signature, once computed, never changes. One file
// per table (host, port, database, schema, table); the table's server-side
// identity is kept inside, and a table dropped and created again, ids that
// went backwards, or a change of the signature definition make the index
// start over, with a one-line notice. Files are written whole to a
// temporary name and renamed, so two processes may refresh at once (the
// last rename wins, each file is whole) and a file may be deleted at any
// moment. Memory and disk are bounded by Options.MaxRows,
// Options.MaxSignatures and Options.MaxFiles.
package sigindex

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jobtriage/jobtriage/internal/atomicfile"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/signature"
)

// Definition is what decides a row's signature: the signature version and
// how much of the payload and exception a listing reads. A file written
// under another definition is rebuilt.
var Definition = "signature/" + strconv.Itoa(signature.Version) +
	" exception-head/" + strconv.Itoa(triage.ExceptionHeadChars) +
	" class-window/" + strconv.Itoa(payload.ClassWindowChars) +
	" class-keys/" + strings.Join(payload.ClassKeys[:], ",")

const (
	// DefaultMaxRows bounds the rows one index holds (about 24 bytes each
	// in memory, under 10 on disk); a larger table is grouped by a pass.
	DefaultMaxRows = 4_000_000
	// DefaultMaxSignatures bounds distinct signatures (up to a few KB each).
	DefaultMaxSignatures = 100_000
	// DefaultMaxFiles bounds the tables indexed, least recently used out first.
	DefaultMaxFiles = 32
	// DefaultRangeMinRows is the id span from which a pass reads ranges at
	// once: below it a pass takes a second or two, as quick in one range.
	DefaultRangeMinRows = 200_000
	// normalizeCacheSize is the signature.Cache of one pass: repeats are
	// mostly recent, and a bigger cache is most of a cold pass's memory.
	normalizeCacheSize = 10_000
	fileSuffix         = ".sigidx"
)

// Options configure an Index.
type Options struct {
	// Dir holds the index files (created when missing).
	Dir    string
	Source triage.IndexSource
	// Notice gets one-line notices (index rebuilt, not used); nil: none.
	Notice        func(string)
	MaxRows       int
	MaxSignatures int
	MaxFiles      int
	// RangeMinRows is the id span from which a pass over a
	// triage.RangeScanner reads ranges at once (0: DefaultRangeMinRows).
	RangeMinRows int
}

// Index is the signature index of the Source's table.
type Index struct {
	o Options
}

// New returns the index of o.Source's table in o.Dir.
func New(o Options) *Index {
	o.MaxRows = cmp.Or(max(o.MaxRows, 0), DefaultMaxRows)
	o.MaxSignatures = cmp.Or(max(o.MaxSignatures, 0), DefaultMaxSignatures)
	o.MaxFiles = cmp.Or(max(o.MaxFiles, 0), DefaultMaxFiles)
	o.RangeMinRows = cmp.Or(max(o.RangeMinRows, 0), DefaultRangeMinRows)
	if o.Notice == nil {
		o.Notice = func(string) {}
	}
	return &Index{o: o}
}

// Stats describe the last refresh.
type Stats struct {
	Path    string
	Rows    int
	Deleted int // rows dropped because they are gone from the table
	Added   int // rows read above the highest indexed id
	Rebuilt string
	Bytes   int // the file's size after the refresh
}

// view is the live rows of a refreshed index.
type view struct {
	d   *data
	loc *time.Location
	st  Stats
}

// Each calls fn for every row, newest first.
func (v *view) Each(fn func(triage.IndexedRow) error) error {
	d := v.d
	for i := len(d.ids) - 1; i >= 0; i-- {
		p := d.places[d.place[i]]
		r := triage.IndexedRow{RowID: d.ids[i], Queue: p.queue, Connection: p.connection,
			FailedAt: timeOf(d.wall[i], d.nanos[d.ids[i]], v.loc), Sig: d.sigs[d.sig[i]],
			NullQueue: p.nulls&placeNullQueue != 0, NullConnection: p.nulls&placeNullConnection != 0}
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// Refresh brings the index up to date and returns its live rows. It
// returns an error wrapping triage.ErrIndexUnusable when the table cannot
// be indexed (no identity, over the bounds); the caller then scans.
func (ix *Index) Refresh(ctx context.Context, loc *time.Location) (triage.IndexView, error) {
	v, err := ix.refresh(ctx, loc)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// RefreshStats is Refresh that also reports what it did.
func (ix *Index) RefreshStats(ctx context.Context, loc *time.Location) (Stats, error) {
	v, err := ix.refresh(ctx, loc)
	return v.st, err
}

func (ix *Index) unusable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{triage.ErrIndexUnusable}, args...)...)
}

func (ix *Index) refresh(ctx context.Context, loc *time.Location) (view, error) {
	loc = cmp.Or(loc, time.UTC)
	id, err := ix.o.Source.IndexIdentity(ctx)
	if err != nil {
		return view{}, ix.unusable("%v", err)
	}
	key := id.Key()
	sum := sha256.Sum256([]byte(key))
	path := filepath.Join(ix.o.Dir, hex.EncodeToString(sum[:16])+fileSuffix)
	st := Stats{Path: path}

	d := ix.load(path, key, id)
	if d == nil {
		d = newData(Definition, key, id.Object)
	} else if d.object != id.Object {
		st.Rebuilt = "the table was recreated"
		d = newData(Definition, key, id.Object)
	}
	before := d.rows()
	changed := false
	from := d.scanned
	if d.scanned != noneScanned {
		deleted, late, backwards, err := ix.dropDeleted(ctx, d)
		if err != nil {
			return view{}, err
		}
		if backwards {
			st.Rebuilt = "ids went backwards"
			d = newData(Definition, key, id.Object)
			from = d.scanned
			before = 0
		} else {
			st.Deleted = deleted
			changed = deleted > 0
			if late > 0 {
				// Committed after a higher id was read: read again from the lowest.
				from = min(from, late-1)
			}
		}
	}
	if st.Rebuilt != "" {
		ix.o.Notice(fmt.Sprintf("signature index ignored (%s): rebuilding it", st.Rebuilt))
		changed = true
	}
	scannedBefore, rowsBefore := d.scanned, d.rows()
	if err := ix.addAbove(ctx, d, from); err != nil {
		return view{}, err
	}
	changed = changed || d.rows() != rowsBefore || d.scanned != scannedBefore
	st.Added = d.rows() - (before - st.Deleted)
	st.Rows = d.rows()
	if changed {
		n, err := ix.save(path, d)
		if err != nil {
			// The answer stands; only the next pass pays again.
			ix.o.Notice(fmt.Sprintf("signature index not saved: %v", err))
		}
		st.Bytes = n
	} else {
		now := time.Now()
		_ = os.Chtimes(path, now, now) // recently used: pruned last
		if fi, err := os.Stat(path); err == nil {
			st.Bytes = int(fi.Size())
		}
	}
	return view{d: d, loc: loc, st: st}, nil
}

// load reads the table's file; nil when there is none, or, with a notice,
// when it cannot serve (another definition or table, unreadable).
func (ix *Index) load(path, key string, id triage.TableIdentity) *data {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		ix.o.Notice(fmt.Sprintf("signature index ignored (%v): rebuilding it", err))
		return nil
	}
	d, err := decode(b)
	switch {
	case err != nil:
		ix.o.Notice("signature index ignored (unreadable file): rebuilding it")
		return nil
	case d.definition != Definition:
		ix.o.Notice("signature index ignored (the signature definition changed): rebuilding it")
		return nil
	case d.key != key:
		ix.o.Notice("signature index ignored (it belongs to another table): rebuilding it")
		return nil
	}
	return d
}

// lateIDs is how far below the highest indexed id a row the index never
// saw may appear and still be taken for a late commit, not for ids that
// went backwards: concurrent inserts commit out of id order (a sequence
// hands out ids before the transactions commit), and a refresh between
// them reads a higher id before a lower one exists.
const lateIDs = 10_000

// errBackwards stops the live-id scan at an id the index never saw, far
// below its highest: the ids went backwards.
var errBackwards = errors.New("ids went backwards")

// dropDeleted keeps the rows whose ids are still live, compacting in place,
// and reports the lowest live id the index does not hold (0 for none; a
// late commit to read again) or that the ids went backwards.
func (ix *Index) dropDeleted(ctx context.Context, d *data) (deleted int, late int64, backwards bool, err error) {
	i, w := 0, 0
	n := len(d.ids)
	keep := func(k int) {
		if k != w {
			d.ids[w], d.sig[w], d.place[w], d.wall[w] = d.ids[k], d.sig[k], d.place[k], d.wall[k]
		}
		w++
	}
	drop := func(k int) { delete(d.nanos, d.ids[k]) }
	err = ix.o.Source.LiveIDs(ctx, d.scanned, func(id int64) error {
		for i < n && d.ids[i] < id {
			drop(i)
			i++
		}
		if i < n && d.ids[i] == id {
			keep(i)
			i++
			return nil
		}
		if id < d.scanned-lateIDs {
			return errBackwards
		}
		if late == 0 {
			late = id
		}
		return nil
	})
	if errors.Is(err, errBackwards) {
		return 0, 0, true, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	for ; i < n; i++ {
		drop(i)
	}
	deleted = n - w
	d.ids, d.sig, d.place, d.wall = d.ids[:w], d.sig[:w], d.place[:w], d.wall[:w]
	return deleted, late, false, nil
}

// addAbove reads the rows above from and indexes those it does not hold
// (from is below the highest indexed id after a late commit), keeping the
// rows sorted by id. A long pass over a RangeScanner reads ranges of ids at
// once (addRanges).
func (ix *Index) addAbove(ctx context.Context, d *data, from int64) error {
	// The rows already held above from, to skip; late commits sit among
	// them, so the tail is sorted again afterwards.
	tail := sort.Search(len(d.ids), func(k int) bool { return d.ids[k] > from })
	held := make(map[int64]bool, len(d.ids)-tail)
	for _, id := range d.ids[tail:] {
		held[id] = true
	}
	defer func() {
		if !sort.SliceIsSorted(d.ids[tail:], func(a, b int) bool { return d.ids[tail+a] < d.ids[tail+b] }) {
			d.sortTail(tail)
		}
	}()
	b := newBuilder(d, held, ix.o.MaxRows, ix.o.MaxSignatures, normalizeCacheSize)
	if top, err := ix.o.Source.MaxFailedID(ctx); err == nil && top > from {
		low := from
		if low == noneScanned {
			low = 0
		}
		rs, ok := ix.o.Source.(triage.RangeScanner)
		if n := top - low; ok && n >= int64(ix.o.RangeMinRows) && n <= int64(ix.o.MaxRows) && rs.RangeScans() > 1 {
			return ix.limited(ix.addRanges(ctx, b, rs, from, low, top))
		}
		// Room for every id up to the highest, at most MaxRows: a million rows
		// grown by doubling would hold two copies of the columns for a moment.
		if n := top - low; n > 0 && n <= int64(ix.o.MaxRows) {
			d.grow(int(n))
		}
	}
	return ix.limited(ix.o.Source.ScanAbove(ctx, from, b.rangeAdd(from, maxID)))
}

// maxID is above every id.
const maxID = math.MaxInt64

// addRanges reads (from, top] in rs.RangeScans() ranges at once, each
// into its own columns, then appends them to d in id order, then reads
// what was added above top meanwhile. The ranges' columns are windows of
// d's own arrays, one after the other, so a pass holds the columns once:
// appending range k moves its rows down over the unused ends of the
// windows before it. (A window overflows only with ids at or below zero;
// then every range is copied out before the appends.)
func (ix *Index) addRanges(ctx context.Context, b *builder, rs triage.RangeScanner, from, low, top int64) error {
	n := rs.RangeScans()
	bounds := make([]int64, n+1)
	bounds[0], bounds[n] = from, top
	for k := 1; k < n; k++ {
		bounds[k] = low + (top-low)*int64(k)/int64(n)
	}
	d := b.d
	d.grow(int(top - low))
	builders := make([]*builder, n)
	windows := make([]int, n)
	off := len(d.ids)
	for k := range n {
		w := int(bounds[k+1] - max(bounds[k], low))
		windows[k] = w
		part := newData(d.definition, d.key, d.object)
		part.ids, part.sig, part.place, part.wall = d.ids[off:off:off+w], d.sig[off:off:off+w], d.place[off:off:off+w], d.wall[off:off:off+w]
		off += w
		// Each range sees its share of the rows, and keeps its share of
		// the normalisation cache (most of a pass's memory).
		builders[k] = newBuilder(part, b.held, ix.o.MaxRows, ix.o.MaxSignatures, normalizeCacheSize/n)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			errs[k] = rs.ScanRange(ctx, bounds[k], bounds[k+1], builders[k].rangeAdd(bounds[k], bounds[k+1]))
			if errs[k] != nil {
				cancel()
			}
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return err
	}
	// A window that overflowed would be merged over the next one's rows:
	// copy the windows out first (rare: ids at or below zero).
	for k, part := range builders {
		if len(part.d.ids) > windows[k] {
			for _, p := range builders {
				p.d.ids, p.d.sig, p.d.place, p.d.wall = slices.Clone(p.d.ids), slices.Clone(p.d.sig), slices.Clone(p.d.place), slices.Clone(p.d.wall)
			}
			break
		}
	}
	for _, part := range builders {
		if err := b.merge(part.d); err != nil {
			return err
		}
	}
	return ix.o.Source.ScanAbove(ctx, top, b.rangeAdd(top, maxID))
}

// firstError is the first error that is not a cancellation another
// range's error caused, else the first error.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	return errors.Join(errs...)
}

// limited turns bound errors into a notice and triage.ErrIndexUnusable.
func (ix *Index) limited(err error) error {
	switch {
	case errors.Is(err, errTooManyRows):
		ix.o.Notice(fmt.Sprintf("signature index not used: the table has more than %d rows", ix.o.MaxRows))
		return ix.unusable("more than %d rows", ix.o.MaxRows)
	case errors.Is(err, errTooManySignatures):
		ix.o.Notice(fmt.Sprintf("signature index not used: the table has more than %d signatures", ix.o.MaxSignatures))
		return ix.unusable("more than %d signatures", ix.o.MaxSignatures)
	}
	return err
}

var (
	errTooManyRows       = errors.New("too many rows")
	errTooManySignatures = errors.New("too many signatures")
)

// builder indexes rows into one data's columns, ascending by id.
type builder struct {
	d       *data
	held    map[int64]bool // read-only: rows d's caller holds already
	bySig   map[string]uint32
	byPlace map[place]uint32
	cache   *signature.Cache
	maxRows int
	maxSigs int
}

func newBuilder(d *data, held map[int64]bool, maxRows, maxSigs, cacheSize int) *builder {
	b := &builder{d: d, held: held, maxRows: maxRows, maxSigs: maxSigs,
		bySig: make(map[string]uint32, len(d.sigs)), byPlace: make(map[place]uint32, len(d.places)),
		cache: signature.NewCache(cacheSize)}
	for i, s := range d.sigs {
		b.bySig[s.ID] = uint32(i)
	}
	for i, p := range d.places {
		b.byPlace[p] = uint32(i)
	}
	return b
}

// rangeAdd is add for the rows of (after, upTo], checking the store kept to it.
func (b *builder) rangeAdd(after, upTo int64) func(*triage.FailedRow) error {
	return func(r *triage.FailedRow) error {
		if (r.ID <= after && after != noneScanned) || r.ID > upTo {
			return fmt.Errorf("sigindex: the store returned id %d, not in (%d, %d]", r.ID, after, upTo)
		}
		return b.add(r)
	}
}

func (b *builder) add(r *triage.FailedRow) error {
	d := b.d
	if b.held[r.ID] {
		return nil
	}
	if len(d.ids) >= b.maxRows {
		return errTooManyRows
	}
	j := triage.JobFromRowWith(r, b.cache.Normalize)
	si, ok := b.bySig[j.Signature]
	if !ok {
		if len(d.sigs) >= b.maxSigs {
			return errTooManySignatures
		}
		si = uint32(len(d.sigs))
		b.bySig[j.Signature] = si
		d.sigs = append(d.sigs, &triage.IndexedSignature{ID: j.Signature, Class: j.Class,
			ExceptionClass: j.ExceptionClass, Message: b.cache.Normalize(j.ExceptionMessage)})
	}
	// Rows come oldest first: the last one seen is the newest.
	s := d.sigs[si]
	s.ExampleRowID, s.ExampleID, s.Example = r.ID, j.ID, j.ExceptionMessage
	p := place{queue: r.Queue, connection: r.Connection}
	for _, pr := range r.Problems {
		switch {
		case pr.Column == "queue" && pr.Reason == triage.ReasonNull:
			p.nulls |= placeNullQueue
		case pr.Column == "connection" && pr.Reason == triage.ReasonNull:
			p.nulls |= placeNullConnection
		}
	}
	w, ns := wallOf(r.FailedAt)
	if ns != 0 {
		d.nanos[r.ID] = ns
	}
	b.append(r.ID, si, b.placeOf(p), w)
	return nil
}

func (b *builder) placeOf(p place) uint32 {
	pi, ok := b.byPlace[p]
	if !ok {
		pi = uint32(len(b.d.places))
		b.byPlace[p] = pi
		b.d.places = append(b.d.places, p)
	}
	return pi
}

func (b *builder) append(id int64, si, pi uint32, w int64) {
	d := b.d
	d.ids = append(d.ids, id)
	d.sig = append(d.sig, si)
	d.place = append(d.place, pi)
	d.wall = append(d.wall, w)
	d.scanned = max(d.scanned, id)
}

// merge appends part's rows, all above b's, mapping its signatures and
// places to b's; its examples are newer and replace b's.
func (b *builder) merge(part *data) error {
	if len(b.d.ids)+len(part.ids) > b.maxRows {
		return errTooManyRows
	}
	sigs := make([]uint32, len(part.sigs))
	for i, ps := range part.sigs {
		si, ok := b.bySig[ps.ID]
		if !ok {
			if len(b.d.sigs) >= b.maxSigs {
				return errTooManySignatures
			}
			si = uint32(len(b.d.sigs))
			b.bySig[ps.ID] = si
			b.d.sigs = append(b.d.sigs, ps)
		} else {
			s := b.d.sigs[si]
			s.ExampleRowID, s.ExampleID, s.Example = ps.ExampleRowID, ps.ExampleID, ps.Example
		}
		sigs[i] = si
	}
	places := make([]uint32, len(part.places))
	for i, p := range part.places {
		places[i] = b.placeOf(p)
	}
	for k, id := range part.ids {
		b.append(id, sigs[part.sig[k]], places[part.place[k]], part.wall[k])
	}
	for id, ns := range part.nanos {
		b.d.nanos[id] = ns
	}
	return nil
}

// save writes the file whole to a temporary name, renames it, and prunes.
func (ix *Index) save(path string, d *data) (int, error) {
	if err := os.MkdirAll(ix.o.Dir, 0o700); err != nil {
		return 0, err
	}
	b := d.encode()
	if err := atomicfile.Write(path, b, 0o600); err != nil {
		return 0, err
	}
	ix.prune(path)
	return len(b), nil
}

// prune removes the least recently used index files beyond MaxFiles, and
// temporary files a crashed process left behind; keep is never removed.
func (ix *Index) prune(keep string) {
	entries, err := os.ReadDir(ix.o.Dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(ix.o.Dir, e.Name())
		if strings.Contains(e.Name(), fileSuffix+".tmp") && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(p)
			continue
		}
		if strings.HasSuffix(e.Name(), fileSuffix) && p != keep {
			files = append(files, file{p, info.ModTime()})
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.After(files[j].mod) })
	for k := ix.o.MaxFiles - 1; k < len(files); k++ {
		_ = os.Remove(files[k].path)
	}
}

// staleTemp is how old a temporary file must be before prune takes it for
// a crashed writer's (a live writer renames within seconds).
const staleTemp = time.Hour

// DefaultDir is the index directory under the user cache directory.
func DefaultDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(base, "jobtriage", "sigindex"), nil
}
