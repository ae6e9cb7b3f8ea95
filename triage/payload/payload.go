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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
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
	ID          string // the Redis job id ("" for database payloads)
	Attempts    *int   // Redis payloads only
	PushedAt    string // Horizon: microtime text
	Tags        []string
	Encrypted   bool // data.command is an Encrypter blob (ShouldBeEncrypted)
	Kind        Kind
	// Data is the raw data value: for string jobs, the job's arguments.
	Data json.RawMessage
	// Extra holds every other top-level key in payload order.
	Extra []Field
}

// Parse decodes a payload. It fails (wrapping ErrMalformed) only when raw
// is not a JSON object.
func Parse(raw []byte) (Envelope, error) {
	fields, err := topLevel(raw)
	if err != nil {
		return Envelope{}, err
	}
	var e Envelope
	for _, f := range fields {
		switch f.Key {
		case "uuid":
			e.UUID = str(f.Raw)
		case "displayName":
			e.DisplayName = str(f.Raw)
		case "job":
			e.Job = str(f.Raw)
		case "maxTries":
			e.MaxTries = intPtr(f.Raw)
		case "maxExceptions":
			e.MaxExceptions = intPtr(f.Raw)
		case "timeout":
			e.Timeout = intPtr(f.Raw)
		case "failOnTimeout":
			e.FailOnTimeout = truthy(f.Raw)
		case "backoff":
			e.Backoff = backoffText(f.Raw)
		case "retryUntil":
			e.RetryUntil = int64Ptr(f.Raw)
		case "createdAt":
			e.CreatedAt = int64Ptr(f.Raw)
		case "id":
			e.ID = scalarText(f.Raw)
		case "attempts":
			e.Attempts = intPtr(f.Raw)
		case "pushedAt":
			e.PushedAt = scalarText(f.Raw)
		case "tags":
			e.Tags = stringList(f.Raw)
		case "data":
			e.Data = f.Raw
			e.readData(f.Raw)
		default:
			e.Extra = append(e.Extra, f)
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

// Class is the display class of the job by the same rule as JobClass.
func (e Envelope) Class() string {
	if e.DisplayName != "" {
		return e.DisplayName
	}
	if c, ok := commandClass(e.Command); ok {
		return c
	}
	return e.Job
}

func (e *Envelope) readData(raw json.RawMessage) {
	fields, err := topLevel(raw)
	if err != nil {
		return // string jobs may carry any data, even a list
	}
	for _, f := range fields {
		switch f.Key {
		case "commandName":
			e.CommandName = str(f.Raw)
		case "command":
			e.Command = str(f.Raw)
		case "batchId":
			e.BatchID = str(f.Raw)
		}
	}
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

// topLevel splits a JSON object into its keys and raw values, in order.
// A key that appears twice keeps its last value, as PHP's json_decode does.
func topLevel(raw []byte) ([]Field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	var fields []Field
	seen := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("%w: object key is not a string", ErrMalformed)
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("%w: value of %q: %v", ErrMalformed, key, err)
		}
		if i, dup := seen[key]; dup {
			fields[i].Raw = val
			continue
		}
		seen[key] = len(fields)
		fields = append(fields, Field{Key: key, Raw: val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the object", ErrMalformed)
	}
	return fields, nil
}

// str is the value of a JSON string, or "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// scalarText is a string's value or a number's text; "" otherwise.
func scalarText(raw json.RawMessage) string {
	if s := str(raw); s != "" {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// number reads a JSON number, or a string holding one (PHP compares "3"
// and 3 alike), as an integer. Fractions are truncated as PHP's (int) does.
func number(raw json.RawMessage) (int64, bool) {
	text := scalarText(raw)
	if text == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsNaN(f) || f > math.MaxInt64 || f < math.MinInt64 {
		return 0, false
	}
	return int64(f), true
}

func int64Ptr(raw json.RawMessage) *int64 {
	n, ok := number(raw)
	if !ok {
		return nil
	}
	return &n
}

func intPtr(raw json.RawMessage) *int {
	n, ok := number(raw)
	if !ok || n > math.MaxInt32 || n < math.MinInt32 {
		return nil
	}
	i := int(n)
	return &i
}

// truthy follows PHP's truthiness for the scalars a payload may hold.
func truthy(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch x := v.(type) {
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != "" && x != "0"
	}
	return false
}

func backoffText(raw json.RawMessage) string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		parts := make([]string, 0, len(list))
		for _, item := range list {
			parts = append(parts, scalarText(item))
		}
		return strings.Join(parts, ",")
	}
	if t := scalarText(raw); t != "" {
		return t
	}
	if s := strings.TrimSpace(string(raw)); s != "null" && s != `""` {
		return s
	}
	return ""
}

// stringList reads a list of strings, skipping items of other types.
func stringList(raw json.RawMessage) []string {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for _, item := range list {
		if t := scalarText(item); t != "" {
			out = append(out, t)
		}
	}
	return out
}
