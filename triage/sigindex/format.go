package sigindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// The file: magic, then
//
//	definition, table key, table object   (strings)
//	scanned                               (varint: the highest id read; math.MinInt64 for none)
//	signatures: count, then per signature ID, Class, ExceptionClass, Message, ExampleID, Example (strings), ExampleRowID (varint)
//	places: count, then per place queue, connection (strings), NULL flags (a byte)
//	rows: count, then per row
//	    id        (first: varint; then uvarint delta from the previous id — ids ascend)
//	    signature (uvarint index)
//	    place     (uvarint: place index << 2 | zero-time bit << 1 | nanoseconds bit)
//	    failed_at (unless zero: varint delta of wall-clock seconds from the previous row's)
//	    nanos     (with the nanoseconds bit: uvarint)
//	CRC-32 (IEEE) of everything before it, 4 bytes little-endian
//
// Strings are a uvarint length and the bytes. A row takes 4 to 8 bytes.
const magic = "JTSIGIX1"

// noneScanned is the scanned mark of an index that has read no row: the
// first pass reads every id, negative ones too.
const noneScanned = math.MinInt64

// data is one table's index in memory: rows ascending by id, in columns.
type data struct {
	definition string
	key        string
	object     string
	scanned    int64

	sigs   []*triage.IndexedSignature
	places []place

	ids   []int64
	sig   []uint32
	place []uint32
	wall  []int64 // wall-clock seconds as if UTC; zeroWall when unreadable
	nanos map[int64]int32
}

// place is a row's queue and connection, and which are NULL (placeNull…).
type place struct {
	queue, connection string
	nulls             uint8
}

const (
	placeNullQueue = 1 << iota
	placeNullConnection
)

// zeroWall marks a row whose failed_at could not be read.
const zeroWall = math.MinInt64

func newData(definition, key, object string) *data {
	return &data{definition: definition, key: key, object: object, scanned: noneScanned, nanos: map[int64]int32{}}
}

func (d *data) rows() int { return len(d.ids) }

// wallOf turns a failed_at into wall-clock seconds and nanoseconds.
func wallOf(t time.Time) (int64, int32) {
	if t.IsZero() {
		return zeroWall, 0
	}
	u := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	return u.Unix(), int32(u.Nanosecond())
}

// timeOf is wallOf's inverse in the app timezone. In UTC the wall clock
// is the instant (the common case, and a grouping makes a million of
// these); elsewhere time.Date resolves the zone, as the store does.
func timeOf(sec int64, nsec int32, loc *time.Location) time.Time {
	if sec == zeroWall {
		return time.Time{}
	}
	u := time.Unix(sec, int64(nsec)).UTC()
	if loc == time.UTC {
		return u
	}
	return time.Date(u.Year(), u.Month(), u.Day(), u.Hour(), u.Minute(), u.Second(), u.Nanosecond(), loc)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (d *data) encode() []byte {
	b := make([]byte, 0, 64+8*len(d.ids))
	b = append(b, magic...)
	b = appendString(b, d.definition)
	b = appendString(b, d.key)
	b = appendString(b, d.object)
	b = binary.AppendVarint(b, d.scanned)
	b = binary.AppendUvarint(b, uint64(len(d.sigs)))
	for _, s := range d.sigs {
		for _, f := range []string{s.ID, s.Class, s.ExceptionClass, s.Message, s.ExampleID, s.Example} {
			b = appendString(b, f)
		}
		b = binary.AppendVarint(b, s.ExampleRowID)
	}
	b = binary.AppendUvarint(b, uint64(len(d.places)))
	for _, p := range d.places {
		b = appendString(b, p.queue)
		b = appendString(b, p.connection)
		b = append(b, p.nulls)
	}
	b = binary.AppendUvarint(b, uint64(len(d.ids)))
	var prevID, prevWall int64
	for i, id := range d.ids {
		if i == 0 {
			b = binary.AppendVarint(b, id)
		} else {
			b = binary.AppendUvarint(b, uint64(id-prevID))
		}
		prevID = id
		b = binary.AppendUvarint(b, uint64(d.sig[i]))
		w := d.wall[i]
		n, hasNanos := d.nanos[id]
		flags := uint64(d.place[i]) << 2
		if w == zeroWall {
			flags |= 2
		}
		if hasNanos {
			flags |= 1
		}
		b = binary.AppendUvarint(b, flags)
		if w != zeroWall {
			b = binary.AppendVarint(b, w-prevWall)
			prevWall = w
		}
		if hasNanos {
			b = binary.AppendUvarint(b, uint64(n))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// errCorrupt: the file is not one this version wrote whole.
var errCorrupt = errors.New("unreadable index file")

// decoder reads the file's fields; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (r *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	return take(r, v, n)
}

func (r *decoder) varint() int64 {
	v, n := binary.Varint(r.b)
	return take(r, v, n)
}

// take consumes the n bytes that held v; after an error it yields zero.
func take[T uint64 | int64](r *decoder, v T, n int) T {
	if r.err == nil && n <= 0 {
		r.err = errCorrupt
	}
	if r.err != nil {
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *decoder) str() string {
	n := r.uvarint()
	if r.err != nil {
		return ""
	}
	if n > uint64(len(r.b)) {
		r.err = errCorrupt
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

// count reads a count that cannot exceed the bytes left (each item takes
// at least min bytes), so a corrupt count never allocates wildly.
func (r *decoder) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errCorrupt
	}
	return int(n)
}

// decode reads a file; errCorrupt unless it is a whole file of this format.
func decode(b []byte) (*data, error) {
	if len(b) < len(magic)+4 || string(b[:len(magic)]) != magic {
		return nil, errCorrupt
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errCorrupt
	}
	r := &decoder{b: body[len(magic):]}
	d := newData(r.str(), r.str(), r.str())
	d.scanned = r.varint()
	nsigs := r.count(7)
	for i := 0; i < nsigs && r.err == nil; i++ {
		s := &triage.IndexedSignature{ID: r.str(), Class: r.str(), ExceptionClass: r.str(), Message: r.str(),
			ExampleID: r.str(), Example: r.str()}
		s.ExampleRowID = r.varint()
		d.sigs = append(d.sigs, s)
	}
	nplaces := r.count(3)
	for i := 0; i < nplaces && r.err == nil; i++ {
		p := place{queue: r.str(), connection: r.str()}
		p.nulls = uint8(r.uvarint())
		d.places = append(d.places, p)
	}
	nrows := r.count(3)
	if r.err != nil {
		return nil, r.err
	}
	d.ids = make([]int64, 0, nrows)
	d.sig = make([]uint32, 0, nrows)
	d.place = make([]uint32, 0, nrows)
	d.wall = make([]int64, 0, nrows)
	var id, wall int64
	for i := 0; i < nrows && r.err == nil; i++ {
		if i == 0 {
			id = r.varint()
		} else {
			delta := r.uvarint()
			if delta == 0 || delta > math.MaxInt64 || id > math.MaxInt64-int64(delta) {
				r.err = errCorrupt
			}
			id += int64(delta)
		}
		sig := r.uvarint()
		flags := r.uvarint()
		if sig >= uint64(len(d.sigs)) || flags>>2 >= uint64(len(d.places)) {
			r.err = errCorrupt
		}
		w := int64(zeroWall)
		if flags&2 == 0 {
			wall += r.varint()
			w = wall
		}
		if flags&1 != 0 {
			n := r.uvarint()
			if n >= uint64(time.Second) {
				r.err = errCorrupt
			}
			d.nanos[id] = int32(n)
		}
		d.ids = append(d.ids, id)
		d.sig = append(d.sig, uint32(sig))
		d.place = append(d.place, uint32(flags>>2))
		d.wall = append(d.wall, w)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(r.b))
	}
	if r.err != nil {
		return nil, r.err
	}
	return d, nil
}

// sortTail sorts the rows from k on by id, every column along.
func (d *data) sortTail(k int) {
	n := len(d.ids) - k
	perm := make([]int, n)
	for i := range perm {
		perm[i] = k + i
	}
	sort.Slice(perm, func(a, b int) bool { return d.ids[perm[a]] < d.ids[perm[b]] })
	ids, sig, place, wall := make([]int64, n), make([]uint32, n), make([]uint32, n), make([]int64, n)
	for i, p := range perm {
		ids[i], sig[i], place[i], wall[i] = d.ids[p], d.sig[p], d.place[p], d.wall[p]
	}
	copy(d.ids[k:], ids)
	copy(d.sig[k:], sig)
	copy(d.place[k:], place)
	copy(d.wall[k:], wall)
}

// grow makes room for n more rows.
func (d *data) grow(n int) {
	d.ids = slices.Grow(d.ids, n)
	d.sig = slices.Grow(d.sig, n)
	d.place = slices.Grow(d.place, n)
	d.wall = slices.Grow(d.wall, n)
}
