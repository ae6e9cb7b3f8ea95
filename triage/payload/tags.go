package payload

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// Tags is the payload's Horizon tags: the top-level "tags" array (its last
// occurrence, as PHP's json_decode reads duplicate keys), read as Parse
// reads Envelope.Tags; nil when there is none or raw is not a JSON object.
func Tags(raw []byte) []string {
	keys, err := topLevel(raw, TopKeys{{Key: "tags"}})
	if err != nil {
		return nil
	}
	return stringList(keys[0].Last)
}

// HasTags reports whether the payload carries every one of want among its
// Tags, each exactly and case-sensitively, as Horizon looks a tag up.
func HasTags(raw []byte, want []string) bool {
	if len(want) == 0 {
		return true
	}
	have := Tags(raw)
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// TagNeedles are substrings every payload carrying tag contains, for a SQL
// pre-filter: the tag as a JSON string, escaped as ClassNeedle does. Horizon
// writes the payload with json_encode's default flags (non-ASCII as \u
// escapes), and the Redis pop script re-encodes it with cjson (non-ASCII
// raw), so the needle is cut at every non-ASCII character into the pieces
// both forms share. A tag that reads as a JSON number may have been written
// as one (Tags reads numbers as their text), so its needle is unquoted.
// The match itself is HasTags, after the pre-filter.
func TagNeedles(tag string) []string {
	if r := gjson.Parse(tag); r.Type == gjson.Number && r.Raw == tag {
		return []string{tag}
	}
	var out []string
	for _, p := range strings.FieldsFunc(`"`+ClassNeedle(tag)+`"`, func(r rune) bool { return r >= utf8.RuneSelf || r == 0x7f }) {
		if p != `"` { // a lone quote is in every payload
			out = append(out, p)
		}
	}
	return out
}
