package payload

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type vector struct {
	File   string `json:"file"`
	Cipher string `json:"cipher"`
	AppKey string `json:"app_key"`
	Plain  string `json:"plain"`
}

// The vectors were encrypted by Laravel 8.83's Encrypter (gen.php), one per
// cipher, with fixed keys.
func vectors(t *testing.T) []vector {
	t.Helper()
	var vs []vector
	if err := json.Unmarshal(fixture(t, "encrypted_keys.json"), &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) != 3 {
		t.Fatalf("want 3 vectors, got %d", len(vs))
	}
	return vs
}

func TestDecryptCommandLaravelVectors(t *testing.T) {
	for _, v := range vectors(t) {
		t.Run(v.Cipher, func(t *testing.T) {
			e, err := Parse(fixture(t, v.File))
			if err != nil {
				t.Fatal(err)
			}
			if !e.Encrypted {
				t.Fatal("payload not recognised as encrypted")
			}
			got, err := DecryptCommand(e.Command, v.AppKey)
			if err != nil {
				t.Fatal(err)
			}
			if got != v.Plain {
				t.Errorf("plaintext = %q\nwant %q", got, v.Plain)
			}
			if !strings.HasPrefix(got, `O:20:"App\Jobs\SendInvoice"`) {
				t.Errorf("plaintext does not start with the serialized job: %.40q", got)
			}
		})
	}
}

func TestDecryptCommandRawKey(t *testing.T) {
	v := vectors(t)[0]
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(v.AppKey, "base64:"))
	e, _ := Parse(fixture(t, v.File))
	if _, err := DecryptCommand(e.Command, string(raw)); err != nil {
		t.Errorf("key without base64: prefix: %v", err)
	}
}

func TestDecryptCommandErrors(t *testing.T) {
	vs := vectors(t)
	cbc, _ := Parse(fixture(t, vs[0].File))
	gcm, _ := Parse(fixture(t, vs[2].File))
	otherKey := vs[1].AppKey // 16 bytes: AES-128, the wrong key for the 256 vectors
	wrong256 := "base64:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", 32)))

	tampered := tamper(t, cbc.Command, func(m map[string]string) { m["value"] = m["value"][:len(m["value"])-4] + "AAA=" })

	tests := []struct {
		name, command, key string
		want               error
	}{
		{"wrong key length", cbc.Command, "base64:AAAA", ErrDecrypt},
		{"key not base64", cbc.Command, "base64:%%%", ErrDecrypt},
		{"wrong cbc key", cbc.Command, wrong256, ErrInvalidMAC},
		{"aes-128 key on aes-256 data", cbc.Command, otherKey, ErrInvalidMAC},
		{"tampered value", tampered, vs[0].AppKey, ErrInvalidMAC},
		{"wrong gcm key", gcm.Command, wrong256, ErrDecrypt},
		{"plain command", `O:3:"Foo":0:{}`, vs[0].AppKey, ErrDecrypt},
		{"base64 but not json", base64.StdEncoding.EncodeToString([]byte("hello")), vs[0].AppKey, ErrDecrypt},
		{"missing iv", base64.StdEncoding.EncodeToString([]byte(`{"value":"AA=="}`)), vs[0].AppKey, ErrDecrypt},
		{"empty", "", vs[0].AppKey, ErrDecrypt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecryptCommand(tt.command, tt.key)
			if !errors.Is(err, tt.want) {
				t.Errorf("error = %v, want %v", err, tt.want)
			}
		})
	}
}

func tamper(t *testing.T, command string, edit func(map[string]string)) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(command)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, _ := json.Marshal(m)
	return base64.StdEncoding.EncodeToString(out)
}

func TestUnwrapSerializedString(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{`s:3:"abc";`, "abc", true},
		{`s:0:"";`, "", true},
		{`s:6:"héllo";`, "héllo", true},
		{`O:3:"Foo":0:{}`, `O:3:"Foo":0:{}`, true},
		{`s:4:"abc";`, "", false},
		{`s:2:"abc";`, "", false},
		{`s:5:`, "", false},
		{`s:x:"";`, "", false},
		{`s:9223372036854775807:"";`, "", false},
	}
	for _, tt := range tests {
		got, err := unwrapSerializedString(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("unwrap(%q) = %q, %v", tt.in, got, err)
		}
	}
}
