package payload

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// maxClassLen bounds the class names JobClass extracts; PHP class names in
// real applications are far shorter.
const maxClassLen = 512

// JobClass returns the class to display for a payload, by the rule
// displayName → the first quoted token of data.command when it starts with
// "O:" (the serialized class) → job. It works on a truncated head of the
// payload (the store sends only the first kilobytes when listing): keys
// before the cut are read with gjson, and a command cut mid-way is scanned
// by hand. It returns "" when none of the three can be read.
func JobClass(raw []byte) string {
	if r := gjson.GetBytes(raw, "displayName"); r.Type == gjson.String && r.Str != "" {
		return r.Str
	}
	if r := gjson.GetBytes(raw, "data.command"); r.Type == gjson.String {
		if c, ok := commandClass(r.Str); ok {
			return c
		}
	} else if c, ok := scanCommandClass(raw); ok {
		return c
	}
	if r := gjson.GetBytes(raw, "job"); r.Type == gjson.String {
		return r.Str
	}
	return ""
}

// commandClass is the class of a serialized object: `O:23:"App\Jobs\X":…`.
func commandClass(command string) (string, bool) {
	if !strings.HasPrefix(command, "O:") {
		return "", false
	}
	open := strings.IndexByte(command, '"')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(command[open+1:], '"')
	if end <= 0 || end > maxClassLen {
		return "", false
	}
	return command[open+1 : open+1+end], true
}

// scanCommandClass finds the class in the raw JSON text of a payload whose
// data.command string is cut off, where it reads `"command":"O:23:\"App\\Jobs\\X\"`.
func scanCommandClass(raw []byte) (string, bool) {
	key := []byte(`"command":"O:`)
	i := bytes.Index(raw, key)
	if i < 0 {
		return "", false
	}
	rest := raw[i+len(key):]
	open := bytes.Index(rest, []byte(`\"`))
	if open < 0 {
		return "", false
	}
	length := rest[:open] // "23:"
	if len(length) < 2 || length[len(length)-1] != ':' {
		return "", false
	}
	for _, c := range length[:len(length)-1] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	rest = rest[open+2:]
	if len(rest) > 2*maxClassLen {
		rest = rest[:2*maxClassLen]
	}
	end := bytes.Index(rest, []byte(`\"`))
	if end <= 0 {
		return "", false
	}
	var class string
	if err := json.Unmarshal(append(append([]byte{'"'}, rest[:end]...), '"'), &class); err != nil || class == "" {
		return "", false
	}
	return class, true
}

// ClassNeedle returns how class appears inside a payload's JSON text, for a
// substring pre-filter in SQL: Laravel's json_encode writes `\` as `\\`,
// `/` as `\/` and `"` as `\"`, and keeps non-ASCII as it is
// (JSON_UNESCAPED_UNICODE). The needle matches both displayName and the class
// inside data.command.
//
// The caller still has to escape it for LIKE: "%" and "_" are wildcards, and
// MySQL treats "\" as LIKE's escape character, so every backslash must be
// doubled again there (or an ESCAPE clause chosen).
func ClassNeedle(class string) string {
	var b strings.Builder
	for _, r := range class {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
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
			const hex = "0123456789abcdef"
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
