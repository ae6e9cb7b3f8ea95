// Package signature groups failed jobs by cause: the same job class failing
// with the same exception class and the same message once its variable parts
// (ids, emails, uuids, paths, URLs, quoted values) are replaced by
// placeholders.
package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Version numbers the definition of a signature: Normalize's output and
// ID's recipe. Whatever stores signatures computed earlier (the local
// signature index, triage/sigindex) rebuilds when it changes, so raise it
// with any change to either that moves a single id.
const Version = 2 // 2: PHP 8.4 closure names read as {closure}

// MaxMessageBytes bounds the part of a message Normalize reads. Messages are
// usually one line; a multi-megabyte one differs in its head anyway.
const MaxMessageBytes = 2048

// Normalize replaces the variable parts of an exception message by
// placeholders so that messages differing only in data share a signature:
// "Order 1042 not found" and "Order 77 not found" both become
// "Order <n> not found".
//
// Placeholders: <url>, <email>, <uuid>, <time>, <ip>, <path>, '<str>' and
// "<str>" (quoted values; identifier-like double-quoted SQL names stay),
// [<list>] (bracketed value lists), <hex> (hex ids, hashes), <token> (long
// random strings), <n> (numbers and lists of numbers). PHP class names such
// as [App\Models\Order] and SQLSTATE codes are kept. Whitespace runs become
// one space. Only the first MaxMessageBytes bytes are read. A closure's
// name is {closure} whatever the PHP version: PHP 8.4's
// {closure:App\Jobs\X::handle():12} reads as PHP 8.3's {closure}, because a
// signature names a cause, which an upgrade of PHP does not change.
//
// The output is a contract (ID hashes it): it is defined by the regular
// expressions in reference_test.go, which the hand-written scanner in
// scan.go reproduces byte for byte, as the tests check. A call costs well
// under a microsecond for a short message and allocates only the result;
// Cache saves even that for messages that repeat.
func Normalize(message string) string {
	if len(message) > shortMessage {
		return normalizeLong(message)
	}
	var a, b [shortMessage + 64]byte
	return normalize(message, a[:0], b[:0])
}

// shortMessage is the length up to which Normalize works in small stack
// buffers: clearing two of MaxMessageBytes costs more than a short message.
const shortMessage = 256

// normalizeLong works in stack buffers sized for MaxMessageBytes, enough
// unless placeholders lengthen the text (then append moves to the heap).
func normalizeLong(message string) string {
	var a, b [MaxMessageBytes + 256]byte
	return normalize(message, a[:0], b[:0])
}

// sqlstatePrefix starts an SQLSTATE code, "SQLSTATE[23000]": it looks like
// a number but names the error, so it is kept.
const sqlstatePrefix = "SQLSTATE["

const sqlstateLen = len(sqlstatePrefix) + 6

func normalize(message string, cur, spare []byte) string {
	// Copy without NUL bytes: NUL stands in for each SQLSTATE code while the
	// passes run, so none may come from the message.
	for part := range strings.SplitSeq(clip(message, MaxMessageBytes), "\x00") {
		cur = append(cur, part...)
	}
	var codeSpace [4 * sqlstateLen]byte
	codes := codeSpace[:0]
	cur, codes = protectSQLSTATE(cur, codes)

	// The passes run in the order their placeholders must be applied: wide,
	// structured tokens first, bare numbers last, so that the digits inside
	// a uuid or a URL never become separate <n>s.
	next := func(out []byte, changed bool) {
		if changed {
			cur, spare = out, cur
		}
	}
	next(replaceClosureNames(spare[:0], cur))
	for k := passURL; k <= passList; k++ {
		next(runPass(spare[:0], cur, k))
	}
	next(replaceQuoted(spare[:0], cur, "'"))
	next(replaceQuoted(spare[:0], cur, `"`))
	next(runPass(spare[:0], cur, passHexLiteral))
	next(replaceHexIDsAndTokens(spare[:0], cur))
	out := finishNumbersAndSpace(spare[:0], cur)
	cur = bytes.TrimSpace(out)
	return restoreSQLSTATE(cur, codes)
}

// protectSQLSTATE replaces each code, SQLSTATE\[[0-9A-Z]{5}\], by a NUL
// (in place) and appends the codes to codes.
func protectSQLSTATE(s, codes []byte) ([]byte, []byte) {
	w, r := 0, 0
	for {
		k := indexFrom(s, r, sqlstatePrefix)
		if k < 0 {
			break
		}
		end := k + sqlstateLen
		if end > len(s) || s[end-1] != ']' || !isSQLSTATECode(s[k+len(sqlstatePrefix):end-1]) {
			w += copy(s[w:], s[r:k+1])
			r = k + 1
			continue
		}
		codes = append(codes, s[k:end]...)
		w += copy(s[w:], s[r:k])
		s[w] = 0
		w++
		r = end
	}
	w += copy(s[w:], s[r:])
	return s[:w], codes
}

func isSQLSTATECode(c []byte) bool {
	return !bytes.ContainsFunc(c, func(r rune) bool { return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z') })
}

// restoreSQLSTATE puts the codes back, in order, where NULs remain. A code
// swallowed by a placeholder (a quoted value, a URL) leaves no NUL, and the
// codes after it move up one NUL: the way Normalize always did it.
func restoreSQLSTATE(s, codes []byte) string {
	if len(codes) == 0 {
		return string(s)
	}
	var b strings.Builder
	b.Grow(len(s) + len(codes))
	for {
		k := bytes.IndexByte(s, 0)
		if k < 0 || len(codes) == 0 {
			break
		}
		b.Write(s[:k])
		b.Write(codes[:sqlstateLen])
		codes = codes[sqlstateLen:]
		s = s[k+1:]
	}
	b.Write(s)
	return b.String()
}

func clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	s = s[:max]
	// Drop a rune the cut split in two (at most UTFMax-1 bytes).
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// ID returns the signature id of a failure: the first 10 hex characters of
// SHA-256 over the job class, the exception class and the normalized
// message, joined by NUL bytes. This recipe is a public contract: ids stay
// the same across versions of jobtriage as long as Normalize's output for a
// message does, so they may be stored, linked and compared between runs.
func ID(jobClass, exceptionClass, normalizedMessage string) string {
	sum := sha256.Sum256([]byte(jobClass + "\x00" + exceptionClass + "\x00" + normalizedMessage))
	return hex.EncodeToString(sum[:5])
}
