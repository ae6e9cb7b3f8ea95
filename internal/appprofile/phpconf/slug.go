package phpconf

//go:generate php ascii_gen.php

import (
	_ "embed"
	"strings"
	"unicode"
	"unicode/utf8"
)

// slugLang is Laravel 8's Str::slug($title, $sep, $lang): Str::ascii, the
// other separator ('_' for '-', else '-') and runs of it to sep, "@" to
// sep+"at"+sep, lowercase, only letters, digits, whitespace and sep kept,
// runs of whitespace and sep to one sep, sep's characters trimmed. An
// invalid UTF-8 sep gives "", as in PHP. ok is false for a language other
// than "en" or the empty (or "0") one, which skips transliteration.
func slugLang(title, sep, lang string) (string, bool) {
	if lang != "" && lang != "0" {
		if lang != "en" {
			return "", false
		}
		title = toASCII(title)
	}
	// Each preg_replace has /u: invalid UTF-8 makes it null, and then "".
	if !utf8.ValidString(title) || !utf8.ValidString(sep) {
		return "", true
	}
	flip := "-"
	if sep == "-" {
		flip = "_"
	}
	inSep := func(r rune) bool { return strings.ContainsRune(sep, r) }
	title = replaceRuns(title, func(r rune) bool { return string(r) == flip }, sep)
	title = strings.ReplaceAll(title, "@", sep+"at"+sep)
	title = strings.ToLower(title)
	title = strings.Map(func(r rune) rune {
		if inSep(r) || unicode.IsLetter(r) || unicode.IsNumber(r) || isPCRESpace(r) {
			return r
		}
		return -1
	}, title)
	title = replaceRuns(title, func(r rune) bool { return inSep(r) || isPCRESpace(r) }, sep)
	return phpTrim(title, sep), true
}

// isPCRESpace is PCRE2's \s under /u: ASCII whitespace and Unicode separators.
func isPCRESpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ':
		return true
	}
	return unicode.Is(unicode.Z, r)
}

func replaceRuns(s string, in func(rune) bool, repl string) string {
	var b strings.Builder
	inRun := false
	for _, r := range s {
		if in(r) {
			if !inRun {
				b.WriteString(repl)
			}
			inRun = true
			continue
		}
		inRun = false
		b.WriteRune(r)
	}
	return b.String()
}

// phpTrim is PHP's trim($s, $chars), "a..z" standing for a range.
func phpTrim(s, chars string) string {
	var set [256]bool
	for i := 0; i < len(chars); i++ {
		c := chars[i]
		if i+3 < len(chars) && chars[i+1] == '.' && chars[i+2] == '.' && chars[i+3] >= c {
			for x := int(c); x <= int(chars[i+3]); x++ {
				set[x] = true
			}
			i += 3
			continue
		}
		set[c] = true
	}
	start, end := 0, len(s)
	for start < end && set[s[start]] {
		start++
	}
	for end > start && set[s[end-1]] {
		end--
	}
	return s[start:end]
}

// asciiTable is voku\helper\ASCII's "en" table (Str::ascii's), cut to the
// one- to three-character keys to_ascii looks up: a header, then a
// "key\treplacement" line per key. Read-only data, searched in place.
//
//go:embed ascii.tsv
var asciiTable string

func asciiReplacement(key string) (string, bool) {
	i := strings.Index(asciiTable, "\n"+key+"\t")
	if i < 0 {
		return "", false
	}
	repl := asciiTable[i+len(key)+2:]
	return repl[:strings.IndexByte(repl, '\n')], true
}

// isASCIIKept is the complement of voku's REGEX_ASCII character class
// [^\x09\x10\x13\x0A\x0D\x20-\x7E]: the characters to_ascii leaves alone.
func isASCIIKept(r rune) bool {
	return r == 0x09 || r == 0x10 || r == 0x13 || r == 0x0A || r == 0x0D || (r >= 0x20 && r <= 0x7E)
}

// toASCII is voku\helper\ASCII::to_ascii($s, 'en') with its defaults, as
// Str::ascii runs it: of the characters outside the kept set, replace every
// three- then two-character run the table knows, then the single ones (each
// key everywhere, once), turn \n, \r and \t into spaces, and drop every byte
// still outside the kept set.
func toASCII(s string) string {
	if s == "" {
		return ""
	}
	var matches []string
	if utf8.ValidString(s) { // preg_match_all with /u fails on invalid UTF-8
		for i, r := range s {
			if !isASCIIKept(r) {
				matches = append(matches, s[i:i+utf8.RuneLen(r)])
			}
		}
	}
	done := map[string]bool{}
	try := func(key string) {
		if done[key] {
			return
		}
		repl, ok := asciiReplacement(key)
		if !ok || !strings.Contains(s, key) {
			return
		}
		done[key] = true
		s = strings.ReplaceAll(s, key, repl)
	}
	for width := 3; width >= 2; width-- {
		for i := 0; i+width <= len(matches); i++ {
			try(strings.Join(matches[i:i+width], ""))
		}
	}
	for _, m := range matches {
		try(m)
	}
	s = strings.NewReplacer("\n\r", " ", "\n", " ", "\r", " ", "\t", " ").Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf && isASCIIKept(rune(c)) {
			b.WriteByte(c)
		}
	}
	return b.String()
}
