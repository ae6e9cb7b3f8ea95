package contexts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jobtriage/jobtriage/internal/atomicfile"
	"github.com/pelletier/go-toml/v2/unstable"
)

// keyLines maps every table and key of a valid document (parts joined by
// NUL) to the line it is on, for errors that name file:line.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			table = keyOf(e.Key())
			lines[strings.Join(table, "\x00")] = lineOfKey(&p, e.Key())
		case unstable.KeyValue:
			full := append(append([]string(nil), table...), keyOf(e.Key())...)
			lines[strings.Join(full, "\x00")] = lineOfKey(&p, e.Key())
		}
	}
	return lines
}

func keyOf(it unstable.Iterator) []string {
	var parts []string
	for it.Next() {
		parts = append(parts, string(it.Node().Data))
	}
	return parts
}

// lineOfKey is the line of a key's first part.
func lineOfKey(p *unstable.Parser, it unstable.Iterator) int {
	if it.Next() {
		if n := it.Node(); n.Raw.Length > 0 {
			return p.Shape(n.Raw).Start.Line
		}
	}
	return 0
}

// currentContextRange is the byte range of the top-level current-context
// assignment; ok is false when there is none.
func currentContextRange(data []byte) (start, end int, ok bool) {
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			return 0, 0, false // top-level keys come before any table
		case unstable.KeyValue:
			k := keyOf(e.Key())
			if len(k) == 1 && k[0] == "current-context" {
				r := e.Raw
				return int(r.Offset), int(r.Offset + r.Length), true
			}
		}
	}
	return 0, 0, false
}

// SetCurrent makes name the current context of the file at path: it edits
// only the current-context line, checks that the result parses with name
// current, and replaces the file atomically (a synced temporary file renamed
// over it; a symbolic link is followed, so the link stays).
func SetCurrent(path, name string) error {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	data, err := readBounded(real)
	if err != nil {
		return err
	}
	f, err := Parse(path, data)
	if err != nil {
		return err
	}
	if _, ok := f.Context(name); !ok {
		return fmt.Errorf("no context %q in %s (have: %s)", name, path, strings.Join(f.Names(), ", "))
	}
	line := "current-context = " + strconv.Quote(name)
	var out []byte
	if s, e, ok := currentContextRange(data); ok {
		out = append(append(append(out, data[:s]...), line...), data[e:]...)
	} else {
		out = append([]byte(line+"\n"), bomless(data)...)
	}
	nf, err := Parse(path, out)
	if err != nil || nf.CurrentContext != name {
		return fmt.Errorf("%s: could not set current-context without changing anything else; edit it by hand", path)
	}
	return writeAtomic(real, out)
}

// bomless drops a leading UTF-8 byte-order mark, which may only begin a file.
func bomless(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// writeAtomic replaces path with data, keeping its mode.
func writeAtomic(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, st.Mode().Perm())
}
