// Package payload reads the JSON envelope Laravel stores for every queued
// job (failed_jobs.payload, jobs.payload, Redis queue entries).
//
// Reading is tolerant: Laravel versions, Horizon and packages such as
// Telescope or Sentry add keys, and rows may have been edited by hand, so a
// missing key or a value of an odd type leaves the field empty instead of
// failing. Only text that is not a JSON object at all is an error. The
// payload is never re-encoded here; editing it is done with sjson elsewhere so
// that Laravel's bytes survive.
package payload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// ErrMalformed is wrapped by Parse errors: the payload is not a JSON object.
var ErrMalformed = errors.New("malformed job payload")

// Kind is what was dispatched, as far as the envelope tells.
type Kind int

const (
	Unknown      Kind = iota
	ObjectJob         // a job class: data.command is the serialized job
	StringJob         // Queue::push('Class@method', $data): no data.command
	Closure           // dispatch(function () {...}): CallQueuedClosure
	Listener          // a queued event listener: CallQueuedListener
	Notification      // SendQueuedNotifications
	Mailable          // SendQueuedMailable
	Broadcast         // BroadcastEvent
)

var kindNames = [...]string{"unknown", "job", "string-job", "closure", "listener", "notification", "mailable", "broadcast"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// wrapperKind maps Laravel's wrapper classes to the kind they stand for.
func wrapperKind(class string) (Kind, bool) {
	switch class {
	case `Illuminate\Queue\CallQueuedClosure`:
		return Closure, true
	case `Illuminate\Events\CallQueuedListener`:
		return Listener, true
	case `Illuminate\Notifications\SendQueuedNotifications`:
		return Notification, true
	case `Illuminate\Mail\SendQueuedMailable`:
		return Mailable, true
	case `Illuminate\Broadcasting\BroadcastEvent`:
		return Broadcast, true
	}
	return Unknown, false
}

// LogContextKey is the top-level key of Laravel's Context (11+), when set.
const LogContextKey = "illuminate:log:context"

// CallQueuedHandler is the "job" of every object payload.
const CallQueuedHandler = `Illuminate\Queue\CallQueuedHandler@call`

// encryptedPrefix is base64 of `{"iv":`, how every Encrypter output begins.
const encryptedPrefix = "eyJpdiI6"

// Field is one top-level key Envelope has no field for, with its raw JSON.
type Field struct {
	Key string
	Raw json.RawMessage
}

// Envelope is the decoded payload. Pointer fields are nil when the key is
// absent, null, or not a number.
type Envelope struct {
	UUID          string
	DisplayName   string
	Job           string
	MaxTries      *int
	MaxExceptions *int
	Timeout       *int
	FailOnTimeout bool
	// Backoff is the raw setting: "10,60", "30", "" for null. An array
	// (which Laravel never writes but a hand-made payload may hold) is
	// rendered comma-separated as Laravel would have.
	Backoff     string
	RetryUntil  *int64 // epoch seconds
	CommandName string // data.commandName
	Command     string // data.command: a PHP serialization or an encrypted blob
	BatchID     string // data.batchId (Laravel 12.51+)
	CreatedAt   *int64 // epoch seconds (Laravel 12.11+)
	// Delay is the delay in seconds the job was pushed with (Laravel
	// 12.11+); nil when the key is absent or null, as for a plain push.
	Delay *int64
	// DeleteWhenMissingModels is the payload key of that name (Laravel
	// 13.0+), nil when absent. On 13.x the worker reads it from the payload:
	// when true, a job whose model is gone is deleted with no failure row.
	DeleteWhenMissingModels *bool
	// LogContext is the raw "illuminate:log:context" value, nil when absent
	// (Context, hidden entries too: unique jobs keep their lock there).
	LogContext json.RawMessage
	ID         string // the Redis job id ("" for database payloads)
	Attempts   *int   // Redis payloads only
	PushedAt   string // Horizon: microtime text
	Tags       []string
	Encrypted  bool // data.command is an Encrypter blob (ShouldBeEncrypted)
	Kind       Kind
	// Data is the raw data value: for string jobs, the job's arguments.
	Data json.RawMessage
	// Extra holds every other top-level key in payload order.
	Extra []Field
}

// Parse decodes a payload; it fails (ErrMalformed) only on a non-object.
func Parse(raw []byte) (Envelope, error) {
	keys, err := topLevel(raw, nil)
	if err != nil {
		return Envelope{}, err
	}
	var e Envelope
	for _, k := range keys {
		v := k.Last
		switch k.Key {
		case "uuid":
			e.UUID = str(v)
		case "displayName":
			e.DisplayName = str(v)
		case "job":
			e.Job = str(v)
		case "maxTries":
			e.MaxTries = intPtr(v)
		case "maxExceptions":
			e.MaxExceptions = intPtr(v)
		case "timeout":
			e.Timeout = intPtr(v)
		case "failOnTimeout":
			e.FailOnTimeout = truthy(v)
		case "backoff":
			e.Backoff = backoffText(v)
		case "retryUntil":
			e.RetryUntil = int64Ptr(v)
		case "createdAt":
			e.CreatedAt = int64Ptr(v)
		case "delay":
			e.Delay = int64Ptr(v)
		case "deleteWhenMissingModels":
			b := truthy(v)
			e.DeleteWhenMissingModels = &b
		case LogContextKey:
			e.LogContext = json.RawMessage(v.Raw)
		case "id":
			e.ID = scalarText(v)
		case "attempts":
			e.Attempts = intPtr(v)
		case "pushedAt":
			e.PushedAt = scalarText(v)
		case "tags":
			e.Tags = stringList(v)
		case "data":
			e.Data = json.RawMessage(v.Raw)
			e.readData(v)
		default:
			e.Extra = append(e.Extra, Field{k.Key, json.RawMessage(v.Raw)})
		}
	}
	e.Encrypted = strings.HasPrefix(e.Command, encryptedPrefix)
	e.Kind = e.kind()
	return e, nil
}

// RetryUntilExpired reports whether a worker would fail this job at once
// with MaxAttemptsExceededException: retryUntil is set and now is past it
// (Worker::markJobAsFailedIfAlreadyExceedsMaxAttempts compares
// now > retryUntil in whole seconds).
func (e Envelope) RetryUntilExpired(now time.Time) bool {
	return e.RetryUntil != nil && now.Unix() > *e.RetryUntil
}

// readData reads data's keys; data that is not an object (string jobs may
// carry any data, even a list) holds none of them.
func (e *Envelope) readData(data gjson.Result) {
	k := ReadTopKeys(data, TopKeys{{Key: "commandName"}, {Key: "command"}, {Key: "batchId"}})
	e.CommandName, e.Command, e.BatchID = str(k[0].Last), str(k[1].Last), str(k[2].Last)
}

func (e Envelope) kind() Kind {
	name := e.CommandName
	if c, ok := commandClass(e.Command); ok && name == "" {
		name = c
	}
	if k, ok := wrapperKind(name); ok {
		return k
	}
	switch {
	case e.Command != "" || e.CommandName != "":
		return ObjectJob
	case e.Job != "" && e.Job != CallQueuedHandler:
		return StringJob
	}
	return Unknown
}

// topLevel reads the top-level keys of a payload (as ReadTopKeys); ErrMalformed
// when it is not a JSON object.
func topLevel(raw []byte, keys TopKeys) (TopKeys, error) {
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("%w: not valid JSON", ErrMalformed)
	}
	obj := gjson.ParseBytes(raw)
	if !obj.IsObject() {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	return ReadTopKeys(obj, keys), nil
}

// TopKey is one top-level key of a JSON object. Last is its value as PHP's
// json_decode reads it; First is the value an edit in place changes; they
// differ when the key occurs more than once (N).
type TopKey struct {
	Key         string
	First, Last gjson.Result
	N           int
}

// TopKeys are an object's top-level keys in the order they first occur.
type TopKeys []TopKey

// ReadTopKeys is the one walk over the top-level keys of the object obj:
// every key in the order it first occurs or, when keys names some (their
// Key set), those only, filled in in place (N stays 0 for one obj lacks):
// a caller that names its keys in a local array allocates nothing.
func ReadTopKeys(obj gjson.Result, keys TopKeys) TopKeys {
	named := len(keys) > 0
	seen := map[string]int{}
	obj.ForEach(func(k, v gjson.Result) bool {
		i, ok := seen[k.Str]
		switch {
		case named:
			if i = slices.IndexFunc(keys, func(t TopKey) bool { return t.Key == k.Str }); i < 0 {
				return true
			}
		case !ok:
			i = len(keys)
			seen[k.Str] = i
			keys = append(keys, TopKey{Key: k.Str})
		}
		if keys[i].N == 0 {
			keys[i].First = v
		}
		keys[i].Last = v
		keys[i].N++
		return true
	})
	return keys
}

// str is the value of a JSON string, or "" for anything else.
func str(v gjson.Result) string {
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}

// scalarText is a string's value or a number's text; "" otherwise.
func scalarText(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return v.Str
	case gjson.Number:
		return v.Raw
	}
	return ""
}

// number reads a JSON number, or a string holding one (PHP compares "3"
// and 3 alike), as an integer. Fractions are truncated as PHP's (int) does.
func number(v gjson.Result) (int64, bool) {
	text := strings.TrimSpace(scalarText(v))
	if text == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(f) || f >= math.MaxInt64 || f < math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

func int64Ptr(v gjson.Result) *int64 {
	n, ok := number(v)
	if !ok {
		return nil
	}
	return &n
}

func intPtr(v gjson.Result) *int {
	n, ok := number(v)
	if !ok || n > math.MaxInt32 || n < math.MinInt32 {
		return nil
	}
	i := int(n)
	return &i
}

// truthy follows PHP's truthiness for the scalars a payload may hold.
func truthy(v gjson.Result) bool {
	switch v.Type {
	case gjson.True:
		return true
	case gjson.Number:
		return v.Float() != 0
	case gjson.String:
		return v.Str != "" && v.Str != "0"
	}
	return false
}

func backoffText(v gjson.Result) string {
	switch {
	case v.IsArray():
		var parts []string
		v.ForEach(func(_, item gjson.Result) bool {
			parts = append(parts, scalarText(item))
			return true
		})
		return strings.Join(parts, ",")
	case v.Type == gjson.String || v.Type == gjson.Number:
		return scalarText(v)
	case v.Type == gjson.Null:
		return ""
	}
	return v.Raw
}

// stringList reads a list of strings, skipping items of other types.
func stringList(v gjson.Result) []string {
	if !v.IsArray() {
		return nil
	}
	out := []string{}
	v.ForEach(func(_, item gjson.Result) bool {
		if t := scalarText(item); t != "" {
			out = append(out, t)
		}
		return true
	})
	return out
}
