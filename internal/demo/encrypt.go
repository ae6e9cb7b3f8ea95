package demo

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
)

// DemoAppKey is the demo database's APP_KEY: it seals the ShouldBeEncrypted
// commands (Laravel's AES-256-CBC Encrypter) and signs the closures, so
// `jobtriage show` given it can decrypt them. It is public on purpose and
// protects nothing: "jobtriage-demo-app-key-not-real!".
const DemoAppKey = "base64:am9idHJpYWdlLWRlbW8tYXBwLWtleS1ub3QtcmVhbCE="

// encryptCommand is Laravel 8.83's Encrypter::encrypt(serialize($job)) of
// a ShouldBeEncrypted job: the serialized command serialized as a string,
// AES-256-CBC with PKCS#7 padding, then base64(json_encode({iv, value, mac,
// tag})), mac = hex(hmac_sha256(iv_b64 . value_b64, key)). The IV is from
// rnd, for reproducible data; key is DemoAppKey's 32 bytes.
func encryptCommand(serialized string, key []byte, rnd io.Reader) (string, error) {
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
	// base64 holds nothing json_encode escapes (slashes unescaped).
	envelope := `{"iv":"` + ivB64 + `","value":"` + valueB64 + `","mac":"` + hex.EncodeToString(mac.Sum(nil)) + `","tag":""}`
	return base64.StdEncoding.EncodeToString([]byte(envelope)), nil
}

// closureSignature is serializable-closure's Hmac signature of a closure.
func closureSignature(serialized string, key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(serialized))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
