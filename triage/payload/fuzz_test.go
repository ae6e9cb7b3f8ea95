package payload

import (
	"errors"
	"strings"
	"testing"
)

// FuzzDecrypt feeds arbitrary commands and keys to DecryptCommand, and
// arbitrary plaintext to unwrapSerializedString (which an attacker
// reaches only with the key, but which parses a length): no panic, every
// failure wraps ErrDecrypt, and an unwrapped string is a part of its input.
func FuzzDecrypt(f *testing.F) {
	f.Add("", "", `s:5:"O:1:x";`)
	f.Add("eyJpdiI6IiIsInZhbHVlIjoiIn0=", "base64:AAAAAAAAAAAAAAAAAAAAAA==", `s:9223372036854775807:"";`)
	f.Add("eyJpdiI6IkFBQUEiLCJ2YWx1ZSI6IkFBQUEiLCJ0YWciOiJBQUFBQUFBQUFBQUFBQUFBQUFBQUFBPT0ifQ==",
		"0123456789abcdef0123456789abcdef", `s:-1:"";`)
	for _, name := range []string{"encrypted_aes_128_cbc.json", "encrypted_aes_256_cbc.json", "encrypted_aes_256_gcm.json"} {
		if e, err := Parse(fixture(f, name)); err == nil {
			f.Add(e.Command, "base64:AAAAAAAAAAAAAAAAAAAAAA==", "s:0:\"\";")
		}
	}
	f.Fuzz(func(t *testing.T, command, appKey, plain string) {
		if _, err := DecryptCommand(command, appKey); err != nil && !errors.Is(err, ErrDecrypt) {
			t.Fatalf("DecryptCommand error does not wrap ErrDecrypt: %v", err)
		}
		got, err := unwrapSerializedString(plain)
		if err != nil && !errors.Is(err, ErrDecrypt) {
			t.Fatalf("unwrapSerializedString error does not wrap ErrDecrypt: %v", err)
		}
		if err == nil && !strings.Contains(plain, got) {
			t.Fatalf("unwrapSerializedString(%q) = %q, not a part of it", plain, got)
		}
	})
}
