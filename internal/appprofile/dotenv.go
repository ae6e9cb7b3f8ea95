package appprofile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/jobtriage/jobtriage/internal/appprofile/phpconf"
)

// maxDotenvBytes bounds a .env file: they are a few kilobytes.
const maxDotenvBytes = 4 << 20

// dotenvEntry is one NAME=value record after phpdotenv's line joining.
type dotenvEntry struct {
	name  string
	value *dotenvValue // nil for a bare "NAME", which unsets NAME
	line  int          // 1-based line the record starts on
}

// dotenvValue is a parsed value before ${VAR} resolution. vars are the
// offsets of the unescaped, non-single-quoted '$': only those may start an
// interpolation, as in phpdotenv's Value class.
type dotenvValue struct {
	chars string
	vars  []int
}

// ParseDotenvEnv parses a dotenv file as Laravel 8+ loads it (phpdotenv 5,
// immutable repository): names in environ are left out (they win), ${VAR}
// resolves against environ, then earlier lines, and a bare "NAME" line
// removes a NAME set earlier.
func ParseDotenvEnv(r io.Reader, environ map[string]string) (map[string]string, error) {
	content, err := io.ReadAll(io.LimitReader(r, maxDotenvBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read dotenv: %w", err)
	}
	if len(content) > maxDotenvBytes {
		return nil, fmt.Errorf("dotenv file is larger than %d bytes; refusing to parse it", maxDotenvBytes)
	}
	entries, err := parseDotenvEntries(normaliseDotenvBytes(content))
	if err != nil {
		return nil, err
	}
	return loadDotenvEntries(entries, environ)
}

// LoadDotenv reads and parses the dotenv file at path (see ParseDotenvEnv).
func LoadDotenv(path string) (map[string]string, error) {
	return loadDotenvFile(path, nil)
}

// loadDotenvFile reads a dotenv file that must be a regular file. It is
// opened non-blocking and checked after opening, so a FIFO is refused
// without waiting for a writer, and a directory, device or symlink loop is
// an error naming the path, never "absent".
func loadDotenvFile(path string, environ map[string]string) (map[string]string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err // callers tell "absent" by os.IsNotExist
	} else if err != nil {
		return nil, dotenvPathError(path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, dotenvPathError(path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("env file %s is %s, not a regular file", path, fileKind(st.Mode()))
	}
	vars, err := ParseDotenvEnv(f, environ)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return vars, nil
}

// DotenvPresent reports whether a dotenv file exists at path. Only nothing
// there (a dangling symlink too, as for PHP's is_file) is absent; anything
// else unreadable is an error, so a broken .env never silently gives way to
// Laravel's defaults.
func DotenvPresent(path string) (bool, error) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, dotenvPathError(path, err)
	case !st.Mode().IsRegular():
		return false, fmt.Errorf("env file %s is %s, not a regular file", path, fileKind(st.Mode()))
	}
	return true, nil
}

func dotenvPathError(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("env file %s is a symlink loop", path)
	}
	return fmt.Errorf("env file %s cannot be read: %w", path, err)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// normaliseDotenvBytes mirrors phpdotenv's Str::utf8: mb_convert_encoding turns
// each invalid byte into '?', and a UTF-8 byte order mark is dropped.
func normaliseDotenvBytes(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			sb.WriteByte('?')
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// Cast is Laravel's env() of a raw value (phpconf.CastEnv) as a string in
// PHP: true is "1", false ""; isNull reports null.
func Cast(v string) (value string, isNull bool) {
	c := phpconf.CastEnv(v)
	s, _ := c.String()
	return s, c.Kind == phpconf.KindNull
}

// dotenvLine is a logical line and where it starts.
type dotenvLine struct {
	text string
	num  int
}

var dotenvLineBreak = regexp.MustCompile(`\r\n|\n|\r`)

// parseDotenvEntries is phpdotenv's Parser: split lines, join multi-line
// double-quoted values (Lines::process), then parse each entry.
func parseDotenvEntries(content string) ([]dotenvEntry, error) {
	var logical []dotenvLine
	multiline := false
	var buffer []string
	bufferStart := 0
	for i, text := range dotenvLineBreak.Split(content, -1) {
		num := i + 1
		started := looksLikeMultilineStart(text)
		if started {
			multiline = true
		}
		if multiline {
			if len(buffer) == 0 {
				bufferStart = num
			}
			buffer = append(buffer, text)
			if looksLikeMultilineStop(text, started) {
				multiline = false
				text = strings.Join(buffer, "\n")
				num = bufferStart
				buffer = nil
			}
		}
		if !multiline && !isDotenvCommentOrBlank(text) {
			logical = append(logical, dotenvLine{text: text, num: num})
		}
	}
	if multiline {
		// phpdotenv drops a double-quoted value that never closes; a dropped
		// DB_HOST would send jobtriage to another database, so this is an
		// error, as an unclosed single quote is in both.
		return nil, fmt.Errorf("line %d: missing closing quote (the double-quoted value runs to the end of the file)", bufferStart)
	}

	entries := make([]dotenvEntry, 0, len(logical))
	for _, l := range logical {
		e, err := parseDotenvEntry(l.text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", l.num, err)
		}
		e.line = l.num
		entries = append(entries, e)
	}
	return entries, nil
}

func looksLikeMultilineStart(line string) bool {
	return strings.Contains(line, `="`) && !looksLikeMultilineStop(line, true)
}

// looksLikeMultilineStop counts the quotes not preceded by a backslash after
// removing escaped backslashes (phpdotenv's /(?=([^\\]"))/ lookahead count).
func looksLikeMultilineStop(line string, started bool) bool {
	if line == `"` {
		return true
	}
	s := strings.ReplaceAll(line, `\\`, "")
	count := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' && s[i+1] == '"' {
			count++
		}
	}
	if started {
		return count > 1
	}
	return count >= 1
}

// phpTrimSet is the character set PHP's trim() strips by default.
const phpTrimSet = " \t\n\r\x00\x0B"

func isDotenvCommentOrBlank(line string) bool {
	t := strings.Trim(line, phpTrimSet)
	return t == "" || t[0] == '#'
}

var dotenvValidName = regexp.MustCompile(`\A[a-zA-Z0-9_.]+\z`)

// parseDotenvEntry's errors never quote the line: it is often a secret.
func parseDotenvEntry(line string) (dotenvEntry, error) {
	rawName, rawValue, hasValue := line, "", false
	if i := strings.IndexByte(line, '='); i >= 0 {
		rawName = strings.Trim(line[:i], phpTrimSet)
		rawValue = strings.Trim(line[i+1:], phpTrimSet)
		hasValue = true
		if rawName == "" {
			return dotenvEntry{}, errors.New("unexpected '=' with no variable name before it")
		}
	}
	name, err := parseDotenvName(rawName)
	if err != nil {
		return dotenvEntry{}, err
	}
	if !hasValue {
		return dotenvEntry{name: name}, nil
	}
	value, err := parseDotenvValue(rawValue)
	if err != nil {
		return dotenvEntry{}, fmt.Errorf("%s: %w", name, err)
	}
	return dotenvEntry{name: name, value: &value}, nil
}

func parseDotenvName(name string) (string, error) {
	if len(name) > 8 && name[:6] == "export" && isCtypeSpace(name[6]) {
		name = strings.TrimLeft(name[6:], phpTrimSet)
	}
	if len(name) >= 3 {
		first, last := name[0], name[len(name)-1]
		if (first == '"' && last == '"') || (first == '\'' && last == '\'') {
			name = name[1 : len(name)-1]
		}
	}
	if !dotenvValidName.MatchString(name) {
		return "", errors.New("invalid variable name (only letters, digits, '_' and '.' are allowed)")
	}
	return name, nil
}

func isCtypeSpace(c byte) bool { return strings.IndexByte(" \t\n\r\v\f", c) >= 0 }

// States of phpdotenv's EntryParser value transducer.
const (
	stateInitial = iota
	stateUnquoted
	stateSingleQuoted
	stateDoubleQuoted
	stateEscape
	stateWhitespace
	stateComment
)

func parseDotenvValue(raw string) (dotenvValue, error) {
	var v dotenvValue
	if strings.Trim(raw, phpTrimSet) == "" {
		return v, nil
	}
	var sb strings.Builder
	appendTok := func(s string, isVar bool) {
		if isVar {
			v.vars = append(v.vars, sb.Len())
		}
		sb.WriteString(s)
	}
	state := stateInitial
	for _, tok := range lexDotenvValue(raw) {
		switch state {
		case stateInitial, stateUnquoted:
			switch {
			case tok == "'" && state == stateInitial:
				state = stateSingleQuoted
			case tok == `"` && state == stateInitial:
				state = stateDoubleQuoted
			case tok == "#":
				state = stateComment
			case state == stateUnquoted && isCtypeSpace(tok[0]):
				state = stateWhitespace
			case tok == "$":
				appendTok(tok, true)
				state = stateUnquoted
			default:
				appendTok(tok, false)
				state = stateUnquoted
			}
		case stateSingleQuoted:
			if tok == "'" {
				state = stateWhitespace
			} else {
				appendTok(tok, false)
			}
		case stateDoubleQuoted:
			switch tok {
			case `"`:
				state = stateWhitespace
			case `\`:
				state = stateEscape
			case "$":
				appendTok(tok, true)
			default:
				appendTok(tok, false)
			}
		case stateEscape:
			switch i := strings.IndexByte("fnrtv", tok[0]); {
			case tok == `"` || tok == `\` || tok == "$":
				appendTok(tok, false)
			case i >= 0: // a control escape: the byte at its index
				appendTok("\f\n\r\t\v"[i:i+1]+tok[1:], false)
			default:
				return dotenvValue{}, errors.New("unexpected escape sequence in double-quoted value (only \\\" \\\\ \\$ \\f \\n \\r \\t \\v are allowed)")
			}
			state = stateDoubleQuoted
		case stateWhitespace:
			if tok == "#" {
				state = stateComment
			} else if !isCtypeSpace(tok[0]) {
				return dotenvValue{}, errors.New("unexpected text after whitespace or a closing quote (quote values that contain spaces)")
			}
		case stateComment:
		}
	}
	switch state {
	case stateSingleQuoted, stateDoubleQuoted, stateEscape:
		return dotenvValue{}, errors.New("missing closing quote")
	}
	v.chars = sb.String()
	return v, nil
}

// lexDotenvValue is phpdotenv's Lexer: runs of line breaks, runs of other
// whitespace, the single characters \ ' " # $, and runs of everything else.
func lexDotenvValue(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		j := i + 1
		switch {
		case c == '\r' || c == '\n':
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
		case isCtypeSpace(c):
			for j < len(s) && isCtypeSpace(s[j]) && s[j] != '\r' && s[j] != '\n' {
				j++
			}
		case strings.IndexByte(`\'"#$`, c) >= 0:
		default:
			for j < len(s) && !isCtypeSpace(s[j]) && strings.IndexByte(`\'"#$`, s[j]) < 0 {
				j++
			}
		}
		toks = append(toks, s[i:j])
		i = j
	}
	return toks
}

var dotenvVarRef = regexp.MustCompile(`\A\$\{([a-zA-Z0-9_.]+)\}`)

// Bounds of ${VAR} expansion: nested references (B=${A}${A}, C=${B}${B}…)
// grow exponentially; past these the file is refused.
const (
	maxDotenvValueBytes    = 1 << 20  // one expanded value
	maxDotenvExpandedBytes = 16 << 20 // all expanded values together
)

var errDotenvExpansion = errors.New("${VAR} expansion too large")

// loadDotenvEntries is phpdotenv's Loader over Laravel's immutable repository.
func loadDotenvEntries(entries []dotenvEntry, environ map[string]string) (map[string]string, error) {
	loaded := map[string]string{}
	lookup := func(name string) (string, bool) {
		if v, ok := environ[name]; ok {
			return v, true
		}
		v, ok := loaded[name]
		return v, ok
	}
	total := 0
	for _, e := range entries {
		if _, external := environ[e.name]; external {
			continue
		}
		if e.value == nil {
			delete(loaded, e.name)
			continue
		}
		v, ok := resolveDotenvValue(*e.value, lookup, maxDotenvValueBytes)
		if total += len(v); !ok || total > maxDotenvExpandedBytes {
			return nil, fmt.Errorf("line %d: %s: %w (over %d bytes for one value or %d for the file)",
				e.line, e.name, errDotenvExpansion, maxDotenvValueBytes, maxDotenvExpandedBytes)
		}
		loaded[e.name] = v
	}
	return loaded, nil
}

// resolveDotenvValue substitutes ${NAME} at each recorded '$', last first,
// so a substituted value is never scanned again; unknown names stay literal.
// ok is false once the value would exceed limit bytes.
func resolveDotenvValue(v dotenvValue, lookup func(string) (string, bool), limit int) (_ string, ok bool) {
	s := v.chars
	for j := len(v.vars) - 1; j >= 0; j-- { // vars ascend: parseDotenvValue appends them
		i := v.vars[j]
		m := dotenvVarRef.FindStringSubmatch(s[i:])
		if m == nil {
			continue
		}
		if val, ok := lookup(m[1]); ok {
			if len(s)-len(m[0])+len(val) > limit {
				return "", false
			}
			s = s[:i] + val + s[i+len(m[0]):]
		}
	}
	return s, true
}
