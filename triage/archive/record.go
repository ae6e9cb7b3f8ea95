// Package archive writes and reads jobtriage's failed-job archives: NDJSON,
// one failed_jobs row per line, every column as the database holds it,
// optionally gzip-compressed. docs/json.md documents the record.
//
// The writer is what makes `prune/flush/forget --archive` safe: Write puts
// a batch's rows in the file and fsyncs it before it returns, and the
// caller deletes the batch only after that. A process killed mid-write
// leaves at most one torn line (or gzip member) at the end: the next
// writer that opens the file cuts it off before appending, and a reader
// ignores it. A row already in the file (a batch archived, then killed
// before its delete committed, and archived again by the next run) is not
// written twice.
package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/triage"
)

// SchemaVersion is in every record; readers refuse a higher one.
const SchemaVersion = 1

// base64Suffix names the variant of a text column whose bytes are not
// valid UTF-8 (a JSON string cannot carry them): "payload_base64".
const base64Suffix = "_base64"

// wire is a record as JSON. Text columns are pointers: null is SQL NULL.
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
}

// appendRecord appends one record line (with its newline) to buf.
func appendRecord(buf *bytes.Buffer, r triage.RawRow, archivedAt time.Time) {
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
	buf.WriteString("}\n")
}

// appendJSONString writes s as a JSON string, without HTML escaping.
func appendJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// decodeRecord parses one record line.
func decodeRecord(line []byte) (triage.RawRow, error) {
	var w wire
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return triage.RawRow{}, fmt.Errorf("not a jobtriage archive record: %v", err)
	}
	if dec.More() {
		return triage.RawRow{}, fmt.Errorf("not a jobtriage archive record: text after the object")
	}
	if w.SchemaVersion < 1 || w.SchemaVersion > SchemaVersion {
		return triage.RawRow{}, fmt.Errorf("archive record schema_version %d: this jobtriage reads 1 to %d", w.SchemaVersion, SchemaVersion)
	}
	if w.ID == nil {
		return triage.RawRow{}, fmt.Errorf("archive record without an id")
	}
	r := triage.RawRow{ID: *w.ID}
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
		switch {
		case c.text != nil && c.b64 != nil:
			return triage.RawRow{}, fmt.Errorf("archive record %d has both %s and %s%s", r.ID, c.name, c.name, base64Suffix)
		case c.b64 != nil:
			b, err := base64.StdEncoding.DecodeString(*c.b64)
			if err != nil {
				return triage.RawRow{}, fmt.Errorf("archive record %d: %s%s: %v", r.ID, c.name, base64Suffix, err)
			}
			s := string(b)
			*c.dst = &s
		default:
			*c.dst = c.text
		}
	}
	return r, nil
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
