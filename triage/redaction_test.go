package triage_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/redact"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

// redactSecrets are values of listed keys in the redaction fixture: a
// payload key, a protected command property, a nested array key, the
// exception message, and a property of an encrypted command.
var redactSecrets = []string{"S1-api-token-value", "S2-password-value", "S3-card-number-value", "S4-message-password", "S5-encrypted-secret"}

func phpStr(s string) string { return `s:` + strconv.Itoa(len(s)) + `:"` + s + `";` }

func chargeCommand(password, card string) string {
	return `O:23:"App\Jobs\ChargeCustomer":3:{` + phpStr("customerId") + `i:7;` + phpStr("\x00*\x00password") + phpStr(password) +
		phpStr("options") + `a:1:{` + phpStr("card_number") + phpStr(card) + `}}`
}

// laravelEncrypt is Laravel's Encrypter::encrypt(serialize($command)) with
// AES-256-CBC, as internal/demo writes it.
func laravelEncrypt(t *testing.T, serialized, appKey string) string {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(appKey, "base64:"))
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte(phpStr(serialized))
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	plain = append(plain, bytes.Repeat([]byte{byte(pad)}, pad)...)
	iv := bytes.Repeat([]byte{7}, aes.BlockSize)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain)
	ivB64, valueB64 := base64.StdEncoding.EncodeToString(iv), base64.StdEncoding.EncodeToString(ct)
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(ivB64 + valueB64))
	env := `{"iv":"` + ivB64 + `","value":"` + valueB64 + `","mac":"` + hex.EncodeToString(mac.Sum(nil)) + `","tag":""}`
	return base64.StdEncoding.EncodeToString([]byte(env))
}

func redactionFixture(t *testing.T, driver string) (*sqlstore.Store, []int64) {
	s := sqltest.OpenLaravel(t, driver, sqlstore.SchemaLaravel8, time.UTC)
	payloadWith := func(u, command string) string {
		cmd, _ := json.Marshal(command)
		return `{"uuid":"` + u + `","displayName":"App\\Jobs\\ChargeCustomer","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,` +
			`"api_token":"` + redactSecrets[0] + `","data":{"commandName":"App\\Jobs\\ChargeCustomer","command":` + string(cmd) + `}}`
	}
	exc := "RuntimeException: charge failed: password=" + redactSecrets[3] + " in /app/X.php:1\nStack trace:\n#0 {main}"
	u1, u2 := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	ids := sqltest.InsertFailed(t, s,
		sqltest.FailedFixture{UUID: &u1, Connection: "database", Queue: "default", Payload: payloadWith(u1, chargeCommand(redactSecrets[1], redactSecrets[2])),
			Exception: exc, FailedAt: "2026-11-30 23:00:00"},
		sqltest.FailedFixture{UUID: &u2, Connection: "database", Queue: "default",
			Payload:   strings.Replace(payloadWith(u2, laravelEncrypt(t, chargeCommand(redactSecrets[4], "x"), laravelAppKey)), `"maxTries"`, `"encrypted":true,"maxTries"`, 1),
			Exception: exc, FailedAt: "2026-11-30 23:30:00"})
	return s, ids
}

func leaks(t *testing.T, what string, v any) {
	t.Helper()
	text := fmt.Sprintf("%+v", v)
	if b, err := json.Marshal(v); err == nil {
		text += string(b)
	}
	for _, s := range redactSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds %q", what, s)
		}
	}
}

// TestServiceRedaction: with Redact set, show, listings, exports and group
// examples hold no listed value, while ids and signatures stay those of
// the rows as stored; without it everything is shown.
func TestServiceRedaction(t *testing.T) {
	forEachDriver(t, func(t *testing.T, driver string) {
		ctx := context.Background()
		s, ids := redactionFixture(t, driver)
		keys := redact.DefaultKeys()
		plain := &triage.Service{Store: s, Now: fixedNow, AppKey: laravelAppKey, Location: time.UTC}
		masked := &triage.Service{Store: s, Now: fixedNow, AppKey: laravelAppKey, Location: time.UTC, Redact: &keys}
		for _, id := range ids {
			ref := strconv.FormatInt(id, 10)
			open, err := plain.Show(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			d, err := masked.Show(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			leaks(t, "show "+ref, d)
			if d.Signature != open.Signature || d.Class != open.Class || d.ID != open.ID {
				t.Errorf("redaction changed the job's identity: %+v vs %+v", d.Job, open.Job)
			}
			if d.Command != triage.CommandPlain && d.Command != triage.CommandDecrypted {
				t.Errorf("command %s (%v): the masked payload no longer decodes", d.Command, d.CommandErr)
			}
			if !strings.Contains(d.CommandText, redact.Redacted) || !strings.Contains(string(d.Payload), redact.Redacted) {
				t.Errorf("nothing masked: %s\n%s", d.CommandText, d.Payload)
			}
			// Without redaction, the values are there: the fixture can leak.
			secret := redactSecrets[1]
			if id == ids[1] {
				secret = redactSecrets[4]
				if open.Command != triage.CommandDecrypted {
					t.Errorf("the encrypted fixture is %s (%v)", open.Command, open.CommandErr)
				}
			}
			if !strings.Contains(open.CommandText, secret) || !strings.Contains(string(open.Payload), redactSecrets[0]) {
				t.Errorf("fixture shows no value unmasked: %s", open.CommandText)
			}
			r, err := masked.GetFailed(ctx, triage.Ref{ID: id})
			if err != nil {
				t.Fatal(err)
			}
			leaks(t, "GetFailed", string(r.Payload)+r.Exception)
		}
		page, err := masked.List(ctx, triage.ListParams{})
		if err != nil || len(page.Jobs) != 2 {
			t.Fatalf("list: %v %v", page, err)
		}
		leaks(t, "list", page)
		n := 0
		if err := masked.Each(ctx, triage.Query{}, true, func(j triage.Job, r *triage.FailedRow) error {
			n++
			leaks(t, "export", []any{j, string(r.Payload), r.Exception})
			return nil
		}); err != nil || n != 2 {
			t.Fatalf("each: %d %v", n, err)
		}
		sigs, err := masked.Group(ctx, triage.GroupParams{})
		if err != nil {
			t.Fatal(err)
		}
		leaks(t, "group", sigs)
		open, _ := plain.Group(ctx, triage.GroupParams{})
		if len(open) != len(sigs) || open[0].ID != sigs[0].ID || !strings.Contains(open[0].Example, redactSecrets[3]) {
			t.Errorf("group ids or the unmasked example differ: %+v vs %+v", open, sigs)
		}
	})
}

func TestRedactText(t *testing.T) {
	keys := redact.DefaultKeys()
	in := "auth failed: token=" + redactSecrets[0]
	if got := (&triage.Service{}).RedactText(in); got != in {
		t.Errorf("off: %q", got)
	}
	if got := (&triage.Service{Redact: &keys}).RedactText(in); got != "auth failed: token=[redacted]" {
		t.Errorf("on: %q", got)
	}
}
