// Package archive writes and reads jobtriage's failed-job archives: NDJSON,
// one failed_jobs row per record, every column as the database holds it,
// optionally gzip-compressed. docs/json.md documents the format.
//
// The contract that makes `prune/flush/forget --archive` safe: Write puts
// a batch's records, each with the sum of its content, and after them the
// batch's trailer (its record count and checksum) in the file in one write
// (one gzip member), and fsyncs it before it returns; the caller deletes
// the batch only after that. So the rows of a batch whose trailer (and, in
// gzip, whose member) is whole in the file may have been deleted, and
// those of a batch whose trailer is not never were: its writer died inside
// Write. Such a tail is only ever at the end, as the next writer that
// opens the file cuts it off before it appends. A reader returns the rows
// of whole, verified batches only; a tail without its trailer is that
// killed write or a copy cut short, which the bytes cannot tell apart, so
// the reader returns none of its rows and reports it (Reader.Cut). A row
// already in the file is not written twice.
package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/sanitize"
)

// SchemaVersion is in every record; readers refuse a higher one.
// Version 1 records carry no sum and no batch ends in a trailer: they are
// read, and counted as unverified.
const SchemaVersion = 2

// summedVersion is the first version whose records carry sums and whose
// batches end in trailers.
const summedVersion = 2

// base64Suffix names the variant of a text column whose bytes are not
// valid UTF-8 (a JSON string cannot carry them): "payload_base64".
const base64Suffix = "_base64"

// wire is a record, or a batch's trailer, as JSON. Text columns are
// pointers: null is SQL NULL.
type wire struct {
	SchemaVersion int     `json:"schema_version"`
	ArchivedAt    string  `json:"archived_at"`
	ID            *int64  `json:"id"`
	UUID          *string `json:"uuid"`
	Connection    *string `json:"connection"`
	Queue         *string `json:"queue"`
	FailedAt      *string `json:"failed_at"`
	Payload       *string `json:"payload"`
	Exception     *string `json:"exception"`

	UUIDB64       *string `json:"uuid_base64"`
	ConnectionB64 *string `json:"connection_base64"`
	QueueB64      *string `json:"queue_base64"`
	FailedAtB64   *string `json:"failed_at_base64"`
	PayloadB64    *string `json:"payload_base64"`
	ExceptionB64  *string `json:"exception_base64"`

	// Sum is the record's key (keyOf) in hex: its id and six columns.
	Sum     *string  `json:"sum"`
	Trailer *trailer `json:"trailer"`
}

// trailer ends each batch a writer appends: its records and batchSum.
type trailer struct {
	Records int    `json:"records"`
	Sum     string `json:"sum"`
}

// batchSum checks a batch whole: its records' keys in order.
func batchSum(keys []key) string {
	h := sha256.New()
	for _, k := range keys {
		h.Write(k[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// appendRecord appends one record line (with its newline) to buf.
func appendRecord(buf *bytes.Buffer, r triage.RawRow, k key, archivedAt time.Time) {
	fmt.Fprintf(buf, `{"schema_version":%d,"archived_at":"%s","id":%d`, SchemaVersion, archivedAt.UTC().Format(time.RFC3339), r.ID)
	for _, c := range []struct {
		name string
		v    *string
	}{{"uuid", r.UUID}, {"connection", r.Connection}, {"queue", r.Queue}, {"failed_at", r.FailedAt}, {"payload", r.Payload}, {"exception", r.Exception}} {
		switch {
		case c.v == nil:
			buf.WriteString(`,"` + c.name + `":null`)
		case utf8.ValidString(*c.v):
			buf.WriteString(`,"` + c.name + `":`)
			appendJSONString(buf, *c.v)
		default:
			buf.WriteString(`,"` + c.name + base64Suffix + `":"`)
			buf.WriteString(base64.StdEncoding.EncodeToString([]byte(*c.v)))
			buf.WriteByte('"')
		}
	}
	fmt.Fprintf(buf, `,"sum":"%x"}`+"\n", k[:])
}

// appendTrailer appends the trailer line of a batch of these keys.
func appendTrailer(buf *bytes.Buffer, keys []key) {
	fmt.Fprintf(buf, `{"schema_version":%d,"trailer":{"records":%d,"sum":"%s"}}`+"\n", SchemaVersion, len(keys), batchSum(keys))
}

// appendJSONString writes s as a JSON string, without HTML escaping.
func appendJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// decoded is one line: a record (Sum nil in version 1), or a trailer.
type decoded struct {
	row     triage.RawRow
	sum     *key
	trailer *trailer
}

// decodeLine parses one line and checks a record against itself: every
// column there, its sum, its uuid the one its payload carries.
func decodeLine(line []byte) (decoded, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return decoded{}, fmt.Errorf("not a jobtriage archive record: %v", err)
	}
	if dec.More() {
		return decoded{}, fmt.Errorf("not a jobtriage archive record: text after the object")
	}
	if w.SchemaVersion < 1 || w.SchemaVersion > SchemaVersion {
		return decoded{}, fmt.Errorf("archive record schema_version %d: this jobtriage reads 1 to %d", w.SchemaVersion, SchemaVersion)
	}
	if w.Trailer != nil {
		if w.ID != nil || w.SchemaVersion < summedVersion {
			return decoded{}, fmt.Errorf("not a jobtriage archive record: a trailer with a record's keys")
		}
		return decoded{trailer: w.Trailer}, nil
	}
	if w.ID == nil {
		return decoded{}, fmt.Errorf("archive record without an id")
	}
	d := decoded{row: triage.RawRow{ID: *w.ID}}
	r := &d.row
	var keys map[string]json.RawMessage // read for a column that is null: null, or missing?
	for _, c := range []struct {
		name      string
		text, b64 *string
		dst       **string
	}{
		{"uuid", w.UUID, w.UUIDB64, &r.UUID},
		{"connection", w.Connection, w.ConnectionB64, &r.Connection},
		{"queue", w.Queue, w.QueueB64, &r.Queue},
		{"failed_at", w.FailedAt, w.FailedAtB64, &r.FailedAt},
		{"payload", w.Payload, w.PayloadB64, &r.Payload},
		{"exception", w.Exception, w.ExceptionB64, &r.Exception},
	} {
		if c.text == nil && c.b64 == nil && keys == nil {
			_ = json.Unmarshal(line, &keys) // it decoded above
		}
		switch {
		case c.text != nil && c.b64 != nil:
			return decoded{}, fmt.Errorf("archive record %d has both %s and %s%s", r.ID, c.name, c.name, base64Suffix)
		case c.b64 != nil:
			b, err := base64.StdEncoding.DecodeString(*c.b64)
			if err != nil {
				return decoded{}, fmt.Errorf("archive record %d: %s%s: %v", r.ID, c.name, base64Suffix, err)
			}
			s := string(b)
			*c.dst = &s
		case c.text == nil && keys[c.name] == nil:
			return decoded{}, fmt.Errorf("archive record %d has no %s (not even null): not as a writer wrote it", r.ID, c.name)
		default:
			*c.dst = c.text
		}
	}
	k := keyOf(*r)
	switch {
	case (w.Sum != nil) != (w.SchemaVersion >= summedVersion):
		return decoded{}, fmt.Errorf("archive record %d: schema_version %d with%s a sum", r.ID, w.SchemaVersion, map[bool]string{true: "", false: "out"}[w.Sum != nil])
	case w.Sum != nil && *w.Sum != hex.EncodeToString(k[:]):
		return decoded{}, fmt.Errorf("archive record %d does not match its sum: edited since it was written", r.ID)
	case w.Sum != nil:
		d.sum = &k
	}
	// Without a sum nothing vouches for a uuid that is not its payload's
	// (Laravel writes the payload's); with one, the row was stored so. A
	// NULL uuid is a legacy table's (no column): the restore checks the target.
	if d.sum != nil || r.UUID == nil {
		return d, nil
	}
	if pu, ok := payloadUUID(r.Payload); ok && *r.UUID != pu {
		return decoded{}, fmt.Errorf("archive record %d: its uuid %s is not its payload's, %s", r.ID, strconv.Quote(sanitize.Line(*r.UUID)), strconv.Quote(sanitize.Line(pu)))
	}
	return d, nil
}

// payloadUUID is the "uuid" a payload carries (the last, as PHP reads it).
func payloadUUID(p *string) (string, bool) {
	if p == nil {
		return "", false
	}
	obj := gjson.Parse(*p)
	if !obj.IsObject() {
		return "", false
	}
	k := payload.ReadTopKeys(obj, payload.TopKeys{{Key: "uuid"}})
	return k[0].Last.Str, k[0].N > 0 && k[0].Last.Type == gjson.String
}

// key identifies a row's content, every column (the id included).
type key [sha256.Size]byte

func keyOf(r triage.RawRow) key {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(r.ID))
	h.Write(n[:])
	for _, v := range []*string{r.UUID, r.Connection, r.Queue, r.FailedAt, r.Payload, r.Exception} {
		if v == nil {
			h.Write([]byte{0})
			continue
		}
		h.Write([]byte{1})
		binary.BigEndian.PutUint64(n[:], uint64(len(*v)))
		h.Write(n[:])
		h.Write([]byte(*v))
	}
	var k key
	h.Sum(k[:0])
	return k
}
