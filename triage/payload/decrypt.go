package payload

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jobtriage/jobtriage/triage/phpser"
)

// ErrDecrypt is wrapped by every DecryptCommand failure.
var ErrDecrypt = errors.New("cannot decrypt job command")

// ErrInvalidMAC: a wrong key or an altered command ("The MAC is invalid.").
var ErrInvalidMAC = fmt.Errorf("%w: the MAC is invalid (wrong APP_KEY?)", ErrDecrypt)

// DecryptCommand decrypts the data.command of a ShouldBeEncrypted job the
// way Laravel's Encrypter does, and returns the job's PHP serialization
// ("O:…"). appKey is APP_KEY as written in .env, with or without the
// "base64:" prefix; its length picks AES-128 (16 bytes) or AES-256 (32).
// CBC payloads must carry a valid HMAC-SHA256; GCM payloads (a "tag") are
// authenticated by GCM itself.
func DecryptCommand(command, appKey string) (string, error) {
	key, err := parseKey(appKey)
	if err != nil {
		return "", err
	}
	env, err := decodeEnvelope(command)
	if err != nil {
		return "", err
	}
	iv, err := base64.StdEncoding.DecodeString(env.IV)
	if err != nil {
		return "", fmt.Errorf("%w: iv is not base64", ErrDecrypt)
	}
	value, err := base64.StdEncoding.DecodeString(env.Value)
	if err != nil {
		return "", fmt.Errorf("%w: value is not base64", ErrDecrypt)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	var plain []byte
	if env.Tag != "" {
		plain, err = openGCM(block, iv, value, env.Tag)
	} else {
		plain, err = openCBC(block, key, iv, value, env)
	}
	if err != nil {
		return "", err
	}
	return unwrapSerializedString(string(plain))
}

type encrypted struct {
	IV    string `json:"iv"`
	Value string `json:"value"`
	MAC   string `json:"mac"`
	Tag   string `json:"tag"`
}

func parseKey(appKey string) ([]byte, error) {
	key := []byte(appKey)
	if rest, ok := strings.CutPrefix(appKey, "base64:"); ok {
		var err error
		if key, err = base64.StdEncoding.DecodeString(rest); err != nil {
			return nil, fmt.Errorf("%w: APP_KEY is not valid base64", ErrDecrypt)
		}
	}
	if len(key) != 16 && len(key) != 32 {
		return nil, fmt.Errorf("%w: APP_KEY is %d bytes, want 16 (AES-128) or 32 (AES-256)", ErrDecrypt, len(key))
	}
	return key, nil
}

func decodeEnvelope(command string) (encrypted, error) {
	var env encrypted
	raw, err := base64.StdEncoding.DecodeString(command)
	if err != nil {
		return env, fmt.Errorf("%w: command is not base64", ErrDecrypt)
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return env, fmt.Errorf("%w: command is not an encrypted payload", ErrDecrypt)
	}
	if env.IV == "" || env.Value == "" {
		return env, fmt.Errorf("%w: command lacks iv or value", ErrDecrypt)
	}
	return env, nil
}

func openCBC(block cipher.Block, key, iv, value []byte, env encrypted) ([]byte, error) {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(env.IV + env.Value))
	want, err := hex.DecodeString(env.MAC)
	if err != nil || !hmac.Equal(mac.Sum(nil), want) {
		return nil, ErrInvalidMAC
	}
	if len(iv) != aes.BlockSize {
		return nil, fmt.Errorf("%w: iv is %d bytes, want %d", ErrDecrypt, len(iv), aes.BlockSize)
	}
	if len(value) == 0 || len(value)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w: ciphertext is not a whole number of blocks", ErrDecrypt)
	}
	plain := make([]byte, len(value))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, value)
	pad := int(plain[len(plain)-1])
	if pad == 0 || pad > aes.BlockSize || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, fmt.Errorf("%w: bad padding", ErrDecrypt)
	}
	return plain[:len(plain)-pad], nil
}

func openGCM(block cipher.Block, iv, value []byte, tagB64 string) ([]byte, error) {
	tag, err := base64.StdEncoding.DecodeString(tagB64)
	if err != nil || len(tag) != 16 {
		return nil, fmt.Errorf("%w: tag is not 16 base64 bytes", ErrDecrypt)
	}
	if len(iv) == 0 {
		return nil, fmt.Errorf("%w: empty iv", ErrDecrypt)
	}
	aead, err := cipher.NewGCMWithNonceSize(block, len(iv))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDecrypt, err)
	}
	plain, err := aead.Open(nil, iv, append(value, tag...), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: authentication failed (wrong APP_KEY?)", ErrDecrypt)
	}
	return plain, nil
}

// unwrapSerializedString undoes Encrypter::encrypt's serialize():
// `s:N:"O:…";` → `O:…`; other plaintext is returned as it is.
func unwrapSerializedString(plain string) (string, error) {
	if !strings.HasPrefix(plain, "s:") {
		return plain, nil
	}
	v, err := phpser.Decode(plain)
	if err != nil || v.Kind != phpser.String {
		return "", fmt.Errorf("%w: decrypted text is a malformed PHP string", ErrDecrypt)
	}
	return v.Str, nil
}
