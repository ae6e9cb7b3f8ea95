package filestore_test

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// fileEntry is one entry of the file in Laravel's key order. Nil pointers
// leave the key out, to build entries with missing fields.
type fileEntry struct {
	ID, Connection, Queue, Payload, Exception, FailedAt *string
	FailedAtTimestamp                                   *int64
}

func sp(s string) *string { return &s }
func ip(n int64) *int64   { return &n }

// phpFile renders entries as PHP's json_encode($jobs, JSON_PRETTY_PRINT)
// does with Laravel's flags (none besides pretty-printing): 4-space indent,
// "key": value, slashes escaped, everything outside ASCII as \u escapes.
// TestGoWriterMatchesPHP checks it byte for byte against the PHP script's
// fixture, so the tests' own files have the real format.
func phpFile(entries []fileEntry) []byte {
	if len(entries) == 0 {
		return []byte("[]")
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, e := range entries {
		b.WriteString("    {\n")
		var fields []string
		str := func(k string, v *string) {
			if v != nil {
				fields = append(fields, "        "+phpString(k)+": "+phpString(*v))
			}
		}
		str("id", e.ID)
		str("connection", e.Connection)
		str("queue", e.Queue)
		str("payload", e.Payload)
		str("exception", e.Exception)
		str("failed_at", e.FailedAt)
		if e.FailedAtTimestamp != nil {
			fields = append(fields, `        "failed_at_timestamp": `+strconv.FormatInt(*e.FailedAtTimestamp, 10))
		}
		b.WriteString(strings.Join(fields, ",\n"))
		if len(fields) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("    }")
		if i < len(entries)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("]")
	return []byte(b.String())
}

// phpString is json_encode of one valid UTF-8 string with default flags.
func phpString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/':
			b.WriteString(`\/`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
