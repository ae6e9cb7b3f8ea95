package cmd

import (
	"errors"
	"strings"
)

// nameList is a repeatable flag of names that may also be comma-separated,
// taken literally (quotes too) but "\," for a comma and "\\" a backslash:
// Laravel names may hold any character, which pflag's StringSlice refused.
type nameList struct{ names *[]string }

func (l nameList) String() string {
	if l.names == nil {
		return ""
	}
	escaped := make([]string, len(*l.names))
	for i, n := range *l.names {
		escaped[i] = strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(n)
	}
	return strings.Join(escaped, ",")
}

// Set refuses an empty name (--queue ”, a,,b): it names nothing, and
// would quietly widen or empty the selection.
func (l nameList) Set(v string) error {
	var cur strings.Builder
	var names []string
	empty := false
	flush := func() {
		if strings.TrimSpace(cur.String()) == "" {
			empty = true
		} else {
			names = append(names, cur.String())
		}
		cur.Reset()
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && i+1 < len(v) && (v[i+1] == ',' || v[i+1] == '\\'):
			cur.WriteByte(v[i+1])
			i++
		case c == ',':
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	if empty {
		return errors.New(`want names like default,emails (comma-separated; an empty name names nothing)`)
	}
	*l.names = append(*l.names, names...)
	return nil
}

func (l nameList) Type() string { return "names" }
