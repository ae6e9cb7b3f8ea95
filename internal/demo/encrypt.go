package demo

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// DemoAppKey is the APP_KEY of the demo database: the encrypted commands
// (jobs implementing ShouldBeEncrypted) are sealed under it with Laravel's
// AES-256-CBC Encrypter, and the queued closures are signed with it, so
// `jobtriage show` can decrypt them when given this key. It is public on
// purpose and protects nothing; never use it for a real application.
// The key bytes are the ASCII text "jobtriage-demo-app-key-not-real!".
const DemoAppKey = "base64:am9idHJpYWdlLWRlbW8tYXBwLWtleS1ub3QtcmVhbCE="

// decodeAppKey reads an APP_KEY as Laravel's EncryptionServiceProvider does:
// an optional "base64:" prefix, then the raw key. AES-256-CBC needs 32 bytes.
func decodeAppKey(appKey string) ([]byte, error) {
	key := []byte(appKey)
	if rest, ok := strings.CutPrefix(appKey, "base64:"); ok {
		k, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, fmt.Errorf("APP_KEY: invalid base64: %v", err)
		}
		key = k
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("APP_KEY: AES-256-CBC needs a 32-byte key, got %d bytes", len(key))
	}
	return key, nil
}

// encryptCommand does what Laravel 8.83's Encrypter::encrypt(serialize($job))
// does for a ShouldBeEncrypted job: serialize the already-serialized command
// once more as a PHP string, AES-256-CBC with PKCS#7 padding, then
// base64(json_encode({iv, value, mac, tag}, JSON_UNESCAPED_SLASHES)) where
// mac = hex(hmac_sha256(iv_b64 . value_b64, key)). The IV comes from rnd so
// that the demo data is reproducible.
func encryptCommand(serialized string, key []byte, rnd io.Reader) (string, error) {
	if len(key) != 32 {
		return "", errors.New("encryptCommand: key must be 32 bytes")
	}
	plain := []byte(serStr(serialized))
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	plain = append(plain, bytes.Repeat([]byte{byte(pad)}, pad)...)
	iv := make([]byte, aes.BlockSize)
	if _, err := io.ReadFull(rnd, iv); err != nil {
		return "", err
	}
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain)
	ivB64 := base64.StdEncoding.EncodeToString(iv)
	valueB64 := base64.StdEncoding.EncodeToString(ct)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ivB64 + valueB64))
	// Standard base64 never contains characters json_encode escapes when
	// slashes are unescaped, so the JSON can be assembled by hand.
	envelope := `{"iv":"` + ivB64 + `","value":"` + valueB64 + `","mac":"` + hex.EncodeToString(mac.Sum(nil)) + `","tag":""}`
	return base64.StdEncoding.EncodeToString([]byte(envelope)), nil
}

// closureSignature is the hash laravel/serializable-closure's Hmac signer
// stores next to a signed closure: base64(hmac_sha256(serialized, key)).
func closureSignature(serialized string, key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(serialized))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
