package cmd

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/internal/buildinfo"
	"github.com/jobtriage/jobtriage/internal/contexts"
	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/follow"
	"github.com/jobtriage/jobtriage/triage/payload"
)

// The machine-readable output of every command is built from the types in
// this file, never from the domain types directly, so that renaming a Go
// field cannot change a document. docs/json.md describes each document;
// cmd/testdata/json/*.golden.json pins them.
//
// Conventions, the same in every document: snake_case keys; enums as
// strings; times as RFC 3339 in whole seconds with the offset of the zone
// they were read in, null when unknown; counts as numbers; a value that can
// be absent is null, never a zero placeholder.

// jsonSchemaVersion is every document's "schema_version": it changes only
// when a key is removed or changes meaning; new keys may appear in any.
const jsonSchemaVersion = 1

// jsonTime is a time in a document: RFC 3339 in whole seconds, null when zero.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + tt.Format(time.RFC3339) + `"`), nil
}

// unixTime is an epoch-seconds value from a payload as a jsonTime.
func unixTime(p *int64, loc *time.Location) jsonTime {
	if p == nil {
		return jsonTime{}
	}
	return jsonTime(time.Unix(*p, 0).In(loc))
}

// nullIfZero is v, or null when v is its type's zero value.
func nullIfZero[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}

// jobDoc is one failed job in failed --json and --ndjson and show --json,
// addressed by its uuid, or by its row_id when uuid is null (legacy rows).
type jobDoc struct {
	// SchemaVersion is set on NDJSON records only, which stand alone.
	SchemaVersion    int      `json:"schema_version,omitempty"`
	UUID             *string  `json:"uuid"`
	RowID            int64    `json:"row_id"`
	Connection       string   `json:"connection"`
	Queue            string   `json:"queue"`
	Class            string   `json:"class"`
	ExceptionClass   string   `json:"exception_class"`
	ExceptionMessage string   `json:"exception_message"`
	FailedAt         jsonTime `json:"failed_at"`
	Signature        string   `json:"signature"`
	// Problem names the columns of the row that could not be read.
	Problem *string `json:"problem"`
	// With --full only: the payload (payload_text when encoding/json refuses it), the exception.
	Payload     json.RawMessage `json:"payload,omitempty"`
	PayloadText *string         `json:"payload_text,omitempty"`
	Exception   *string         `json:"exception,omitempty"`
}

func newJobDoc(j triage.Job) jobDoc {
	return jobDoc{
		UUID: nullIfZero(j.UUID), RowID: j.RowID, Connection: j.Connection, Queue: j.Queue, Class: j.Class,
		ExceptionClass: j.ExceptionClass, ExceptionMessage: j.ExceptionMessage, FailedAt: jsonTime(j.FailedAt),
		Signature: j.Signature, Problem: nullIfZero(j.Problem),
	}
}

// fullJobDoc adds the row's whole payload and exception (--full).
func fullJobDoc(j triage.Job, r *triage.FailedRow) jobDoc {
	d := newJobDoc(j)
	d.Payload, d.PayloadText, _ = rawPayload(r.Payload) // valid UTF-8 either way
	d.Exception = &r.Exception
	return d
}

// failedDoc is failed --json.
type failedDoc struct {
	SchemaVersion int `json:"schema_version"`
	// Target names the app and store listed, as confirmations do.
	Target string   `json:"target"`
	Jobs   []jobDoc `json:"jobs"`
	// Next is the --after cursor of the next page; null on the last one.
	Next *string `json:"next"`
}

// signatureDoc is one error signature in failed --group --json.
type signatureDoc struct {
	Signature      string `json:"signature"`
	Class          string `json:"class"`
	ExceptionClass string `json:"exception_class"`
	// ExceptionMessage is the newest job's message, as in a jobDoc;
	// ExceptionMessageNormalized is the one all the jobs share once ids,
	// numbers, paths and quoted values are replaced by <n>, <path>, ….
	ExceptionMessage           string   `json:"exception_message"`
	ExceptionMessageNormalized string   `json:"exception_message_normalized"`
	Count                      int      `json:"count"`
	FirstSeen                  jsonTime `json:"first_seen"`
	LastSeen                   jsonTime `json:"last_seen"`
	Queues                     []string `json:"queues"`
	Connections                []string `json:"connections"`
	// NewestID is the newest job's id as show takes it (uuid, else row id).
	NewestID string `json:"newest_id"`
	// The trend (groupDoc's window_seconds): failures in the last window,
	// in the one before, their difference, and the two windows in
	// triage.SparkBuckets slices, oldest first.
	Recent   int   `json:"recent"`
	Previous int   `json:"previous"`
	Change   int   `json:"change"`
	Spark    []int `json:"spark"`
	// New: first seen at or after groupDoc's new_since.
	New bool `json:"new"`
}

// groupDoc is failed --group --json.
type groupDoc struct {
	SchemaVersion int            `json:"schema_version"`
	Target        string         `json:"target"`
	Signatures    []signatureDoc `json:"signatures"`
	// TotalJobs and TotalSignatures count also what --limit left out.
	TotalJobs       int `json:"total_jobs"`
	TotalSignatures int `json:"total_signatures"`
	// Sort is the order (count, last, first, trend); a signature is new from
	// NewSince on; OnlyNew: --new-since kept only those.
	Sort          string   `json:"sort"`
	WindowSeconds int64    `json:"window_seconds"`
	NewSince      jsonTime `json:"new_since"`
	OnlyNew       bool     `json:"only_new"`
}

func newSignatureDoc(s triage.Signature) signatureDoc {
	return signatureDoc{
		Signature: s.ID, Class: s.Class, ExceptionClass: s.ExceptionClass,
		ExceptionMessage: s.Example, ExceptionMessageNormalized: s.Message,
		Count: s.Count, FirstSeen: jsonTime(s.FirstSeen), LastSeen: jsonTime(s.LastSeen),
		Queues: orEmpty(s.Queues), Connections: orEmpty(s.Connections), NewestID: s.NewestID,
		Recent: s.Recent, Previous: s.Previous, Change: s.Change(), Spark: orEmpty(s.Spark), New: s.New,
	}
}

// orEmpty is s, or an empty list (never null) when s is nil.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// envelopeDoc is the decoded payload in show --json: Laravel's payload keys
// in snake_case, null when the payload lacks them.
type envelopeDoc struct {
	UUID          *string  `json:"uuid"`
	DisplayName   *string  `json:"display_name"`
	Job           *string  `json:"job"`
	Kind          string   `json:"kind"` // docs/json.md lists the values
	MaxTries      *int     `json:"max_tries"`
	MaxExceptions *int     `json:"max_exceptions"`
	Timeout       *int     `json:"timeout"`
	FailOnTimeout bool     `json:"fail_on_timeout"`
	Backoff       *string  `json:"backoff"` // "10,60": Laravel's setting as written
	RetryUntil    jsonTime `json:"retry_until"`
	CommandName   *string  `json:"command_name"`
	Encrypted     bool     `json:"encrypted"`
	BatchID       *string  `json:"batch_id"`
	CreatedAt     jsonTime `json:"created_at"`
	// Delay is the seconds the job was pushed with, null for a plain push.
	Delay *int64 `json:"delay"`
	// DeleteWhenMissingModels is null without the key (before Laravel 13).
	DeleteWhenMissingModels *bool `json:"delete_when_missing_models"`
	// LogContext is the "illuminate:log:context" value as it is, or null.
	LogContext json.RawMessage `json:"log_context"`
	ID         *string         `json:"id"`        // the Redis job id
	Attempts   *int            `json:"attempts"`  // Redis payloads only
	PushedAt   *string         `json:"pushed_at"` // Horizon's microtime text
	Tags       []string        `json:"tags"`
	// Data is the payload's data value as it is (command included); Extra
	// holds every other top-level key, in payload order.
	Data  json.RawMessage `json:"data"`
	Extra []extraDoc      `json:"extra"`
}

type extraDoc struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

func newEnvelopeDoc(e payload.Envelope, loc *time.Location) *envelopeDoc {
	e = encodableEnvelope(e)
	d := &envelopeDoc{
		UUID: nullIfZero(e.UUID), DisplayName: nullIfZero(e.DisplayName), Job: nullIfZero(e.Job), Kind: strings.ReplaceAll(e.Kind.String(), "-", "_"),
		MaxTries: e.MaxTries, MaxExceptions: e.MaxExceptions, Timeout: e.Timeout, FailOnTimeout: e.FailOnTimeout,
		Backoff: nullIfZero(e.Backoff), RetryUntil: unixTime(e.RetryUntil, loc), CommandName: nullIfZero(e.CommandName),
		Encrypted: e.Encrypted, BatchID: nullIfZero(e.BatchID), CreatedAt: unixTime(e.CreatedAt, loc), ID: nullIfZero(e.ID),
		Attempts: e.Attempts, PushedAt: nullIfZero(e.PushedAt), Tags: orEmpty(e.Tags), Data: e.Data, Extra: []extraDoc{},
		Delay: e.Delay, DeleteWhenMissingModels: e.DeleteWhenMissingModels, LogContext: e.LogContext,
	}
	for _, f := range e.Extra {
		d.Extra = append(d.Extra, extraDoc{f.Key, f.Raw})
	}
	return d
}

// exceptionDoc is one exception of the chain, thrown first.
type exceptionDoc struct {
	Class   string     `json:"class"`
	Message string     `json:"message"`
	File    *string    `json:"file"`
	Line    *int       `json:"line"`
	Frames  []frameDoc `json:"frames"`
}

type frameDoc struct {
	Index int     `json:"index"`
	File  *string `json:"file"` // null for {main}
	Line  *int    `json:"line"`
	Call  string  `json:"call"`
	Raw   string  `json:"raw"`
	// Vendor marks frames outside the application (vendor/, PHP internals).
	Vendor bool `json:"vendor"`
}

func newExceptionDoc(e exception.Exception) exceptionDoc {
	d := exceptionDoc{Class: e.Class, Message: e.Message, File: nullIfZero(e.File), Line: nullIfZero(e.Line), Frames: []frameDoc{}}
	for _, f := range e.Frames {
		d.Frames = append(d.Frames, frameDoc{Index: f.Index, File: nullIfZero(f.File), Line: nullIfZero(f.Line), Call: f.Call, Raw: f.Raw, Vendor: f.Vendor})
	}
	return d
}

// showDoc is show --json: the job's fields, then its detail.
type showDoc struct {
	SchemaVersion int    `json:"schema_version"`
	Target        string `json:"target"`
	jobDoc
	// Envelope is null when the payload is no JSON object (payload_error).
	Envelope     *envelopeDoc `json:"envelope"`
	PayloadError *string      `json:"payload_error"`
	// CommandState is none, plain, encrypted, decrypted or unreadable.
	CommandState      string         `json:"command_state"`
	CommandText       *string        `json:"command"` // the decoded properties, formatted
	CommandError      *string        `json:"command_error"`
	RetryUntilExpired bool           `json:"retry_until_expired"`
	Exceptions        []exceptionDoc `json:"exceptions"` // thrown first
	// PayloadNote says why payload_text holds a payload that was parsed.
	PayloadNote *string `json:"payload_note"`
}

func newShowDoc(d triage.Detail) showDoc {
	out := showDoc{SchemaVersion: jsonSchemaVersion, jobDoc: newJobDoc(d.Job), CommandState: string(d.Command),
		CommandText: nullIfZero(d.CommandText), RetryUntilExpired: d.RetryUntilExpired, Exceptions: []exceptionDoc{}}
	out.Exception = &d.Exception
	loc := d.FailedAt.Location()
	if d.PayloadErr != nil {
		out.PayloadError = nullIfZero(d.PayloadErr.Error())
		out.PayloadText = new(string(d.Payload))
	} else {
		out.Envelope = newEnvelopeDoc(d.Envelope, loc)
		// The envelope parser reads what encoding/json may refuse (too deep): text, with a note.
		out.Payload, out.PayloadText, out.PayloadNote = rawPayload(d.Payload)
	}
	if d.CommandErr != nil {
		out.CommandError = nullIfZero(d.CommandErr.Error())
	}
	for i := len(d.Chain) - 1; i >= 0; i-- {
		out.Exceptions = append(out.Exceptions, newExceptionDoc(d.Chain[i]))
	}
	return out
}

// retryDoc is retry --json; ids and skipped are spliced in from spools (writeJSONSpliced).
type retryDoc struct {
	SchemaVersion int            `json:"schema_version"`
	DryRun        bool           `json:"dry_run"`
	Retried       int            `json:"retried"`
	IDs           []string       `json:"ids"`
	ByQueue       map[string]int `json:"by_queue"`
	ByClass       map[string]int `json:"by_class"`
	Skipped       []triage.Skip  `json:"skipped"`
	NotFound      []string       `json:"not_found"`
	// AlreadyQueued are retried jobs found on their queue already: deleted, not pushed again.
	AlreadyQueued []string `json:"already_queued"`
	// Follow is the follow-through (--follow, --canary, --rate), or absent.
	Follow *followDoc `json:"follow,omitempty"`
	// Plan is what a dry run with those flags would do; absent otherwise.
	Plan *planDoc `json:"plan,omitempty"`
	// DeleteWhenMissingModels counts the retried jobs with that payload key true.
	DeleteWhenMissingModels int `json:"delete_when_missing_models"`
}

func newRetryDoc(r triage.RetryResult) retryDoc {
	d := retryDoc{SchemaVersion: jsonSchemaVersion, DryRun: r.DryRun, Retried: r.Retried, IDs: orEmpty(r.IDs),
		ByQueue: r.ByQueue, ByClass: r.ByClass, Skipped: orEmpty(r.Skipped), NotFound: orEmpty(r.NotFound),
		AlreadyQueued: orEmpty(r.AlreadyQueued), DeleteWhenMissingModels: r.DeleteWhenMissingModels}
	if d.ByQueue == nil {
		d.ByQueue = map[string]int{}
	}
	if d.ByClass == nil {
		d.ByClass = map[string]int{}
	}
	return d
}

// forgetDoc is forget --json.
type forgetDoc struct {
	SchemaVersion int      `json:"schema_version"`
	DryRun        bool     `json:"dry_run"`
	Deleted       int      `json:"deleted"`
	IDs           []string `json:"ids"`
	NotFound      []string `json:"not_found"`
	// Skipped are the rows failed_jobs refused to delete, left there.
	Skipped []triage.Skip `json:"skipped"`
	// Archive is where the rows went first (--archive); null without it.
	Archive *archiveDoc `json:"archive"`
}

// contextDoc is one context in context list and show --json, its secrets masked (Redacted).
type contextDoc struct {
	Name        string           `json:"name"`
	Current     bool             `json:"current"`
	Label       *string          `json:"label"`
	Production  bool             `json:"production"`
	Color       *string          `json:"color"`
	App         *string          `json:"app"`
	EnvFile     *string          `json:"env_file"`
	DSN         *string          `json:"dsn"`
	JobsDSN     *string          `json:"jobs_dsn"`
	FailedTable *string          `json:"failed_table"`
	JobsTable   *string          `json:"jobs_table"`
	Timezone    *string          `json:"timezone"`
	Redis       *string          `json:"redis"`
	Notify      contextNotifyDoc `json:"notify"`
}

type contextNotifyDoc struct {
	SlackWebhook        *string `json:"slack_webhook"`
	WebhookURL          *string `json:"webhook_url"`
	PagerDutyRoutingKey *string `json:"pagerduty_routing_key"`
	Command             *string `json:"command"`
}

func newContextDoc(c contexts.Context, current bool) contextDoc {
	r := c.Redacted()
	return contextDoc{Name: r.Name, Current: current, Label: nullIfZero(r.Label), Production: r.Production,
		Color: nullIfZero(r.DisplayColor()), App: nullIfZero(r.App), EnvFile: nullIfZero(r.EnvFile),
		DSN: nullIfZero(r.DSN), JobsDSN: nullIfZero(r.JobsDSN), FailedTable: nullIfZero(r.FailedTable),
		JobsTable: nullIfZero(r.JobsTable), Timezone: nullIfZero(r.Timezone), Redis: nullIfZero(r.Redis),
		Notify: contextNotifyDoc{SlackWebhook: nullIfZero(r.Notify.SlackWebhook), WebhookURL: nullIfZero(r.Notify.WebhookURL),
			PagerDutyRoutingKey: nullIfZero(r.Notify.PagerDutyRoutingKey), Command: nullIfZero(r.Notify.Command)}}
}

// contextListDoc is context list --json.
type contextListDoc struct {
	SchemaVersion int          `json:"schema_version"`
	Config        *string      `json:"config"`  // the file read; null when there is none
	Current       *string      `json:"current"` // the context in force; null when none
	Contexts      []contextDoc `json:"contexts"`
}

// contextShowDoc is context show --json.
type contextShowDoc struct {
	SchemaVersion int        `json:"schema_version"`
	Config        *string    `json:"config"`
	Context       contextDoc `json:"context"`
}

// followDoc is retry --json's "follow" with --follow, --canary or --rate; null otherwise.
type followDoc struct {
	// Followed counts every pushed job with --follow, else the canaries.
	Followed    int `json:"followed"`
	Done        int `json:"done"`
	FailedAgain int `json:"failed_again"`
	Waiting     int `json:"waiting"`
	Running     int `json:"running"`
	// Untracked jobs had no payload uuid and were not followed.
	Untracked int  `json:"untracked"`
	TimedOut  bool `json:"timed_out"`
	// StoppedByBreaker: --stop-after-failures tripped; NotPushed jobs of
	// the selection were left in failed_jobs (by it or by a canary stop).
	StoppedByBreaker bool              `json:"stopped_by_breaker"`
	NotPushed        int               `json:"not_pushed"`
	Canary           *canaryDoc        `json:"canary"`
	Jobs             []followJobDoc    `json:"jobs"`
	NewFailures      []failureGroupDoc `json:"new_failures"`
	Unread           int               `json:"new_failures_unread"`
}

// planDoc is what a dry run with --canary, --follow or --rate would do.
type planDoc struct {
	Canaries int     `json:"canaries"`
	Rest     int     `json:"rest"`
	Needed   int     `json:"canaries_needed"`
	Success  float64 `json:"canary_success"`
	Follow   bool    `json:"follow"`
	Rate     float64 `json:"rate_per_second"`
}

// canaryDoc is the canaries' outcome and the decision taken on the rest.
type canaryDoc struct {
	Size        int     `json:"size"`
	Needed      int     `json:"needed"`
	Success     float64 `json:"success"`
	Done        int     `json:"done"`
	FailedAgain int     `json:"failed_again"`
	Unsettled   int     `json:"unsettled"`
	Decision    string  `json:"decision"` // "continue" or "stop"
}

// stopped reports whether the canaries stopped the retry (false for none).
func (d *canaryDoc) stopped() bool { return d != nil && d.Decision == follow.Stop.String() }

// followJobDoc is one followed job and where it ended.
type followJobDoc struct {
	ID         string `json:"id"`
	UUID       string `json:"uuid"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Class      string `json:"class"`
	State      string `json:"state"` // waiting, running, done, failed_again
}

// failureGroupDoc is the followed jobs that failed again with one signature.
type failureGroupDoc struct {
	Signature      string   `json:"signature"`
	Class          string   `json:"class"`
	ExceptionClass string   `json:"exception_class"`
	Message        string   `json:"exception_message"`
	Count          int      `json:"count"`
	IDs            []string `json:"ids"`
}

// versionDoc is version --json. Unknown values are null.
type versionDoc struct {
	SchemaVersion int     `json:"schema_version"`
	Version       string  `json:"version"`
	Commit        *string `json:"commit"`
	BuildDate     *string `json:"build_date"`
	Modified      bool    `json:"modified"`
	GoVersion     string  `json:"go_version"`
	Platform      string  `json:"platform"`
}

func newVersionDoc(in buildinfo.Info) versionDoc {
	return versionDoc{SchemaVersion: jsonSchemaVersion, Version: in.Version, Commit: nullIfZero(in.Commit),
		BuildDate: nullIfZero(in.Date), Modified: in.Modified, GoVersion: in.GoVersion, Platform: in.Platform}
}
