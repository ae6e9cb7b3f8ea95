package triage

import (
	"context"
	"strings"

	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/phpser"
)

// CommandState says how much of data.command could be read.
type CommandState string

const (
	CommandNone       CommandState = "none"      // string jobs carry no command
	CommandPlain      CommandState = "plain"     // a PHP serialization, decoded
	CommandEncrypted  CommandState = "encrypted" // ShouldBeEncrypted, no APP_KEY to read it
	CommandDecrypted  CommandState = "decrypted" // encrypted, read with APP_KEY
	CommandUnreadable CommandState = "unreadable"
)

// Detail is everything about one failed job.
type Detail struct {
	Job
	Payload   []byte
	Exception string

	Envelope    payload.Envelope
	PayloadErr  error // the payload is not valid JSON; Payload still holds the bytes
	Chain       exception.Chain
	Command     CommandState
	CommandText string // the formatted properties of the decoded command
	CommandErr  error
	// RetryUntilExpired: a retry would fail at once with MaxAttemptsExceeded.
	RetryUntilExpired bool
}

// Show reads one failed job by the id the operator typed.
func (s *Service) Show(ctx context.Context, id string) (Detail, error) {
	ref, err := ParseRef(id)
	if err != nil {
		return Detail{}, err
	}
	r, err := s.Store.GetFailed(ctx, ref)
	if err != nil {
		return Detail{}, err
	}
	return s.detailOf(r), nil
}

func (s *Service) detailOf(r *FailedRow) Detail {
	// The job (its signature) from the row as stored; shown masked.
	d := Detail{Job: JobFromRow(listingRow(r, true))}
	s.redactJob(&d.Job)
	r = s.redactRow(r)
	d.Payload, d.Exception = r.Payload, r.Exception
	d.Chain = exception.Parse(r.Exception)
	env, err := payload.Parse(r.Payload)
	if err != nil {
		d.PayloadErr = err
		d.Command = CommandUnreadable
		return d
	}
	d.Envelope = env
	if s.Now != nil {
		d.RetryUntilExpired = env.RetryUntilExpired(s.Now())
	}
	cmd := env.Command
	switch {
	case cmd == "":
		d.Command = CommandNone
		return d
	case env.Encrypted:
		keys := s.appKeys()
		if len(keys) == 0 {
			d.Command = CommandEncrypted
			return d
		}
		// Laravel's encrypter tries APP_KEY, then each of
		// APP_PREVIOUS_KEYS; the first key whose MAC matches decrypts.
		var plain string
		var err error
		for _, k := range keys {
			if plain, err = payload.DecryptCommand(cmd, k); err == nil {
				break
			}
		}
		if err != nil {
			d.Command, d.CommandErr = CommandEncrypted, err
			return d
		}
		d.Command, cmd = CommandDecrypted, s.redactCommand(plain)
	case strings.HasPrefix(cmd, "O:"):
		d.Command = CommandPlain
	default:
		d.Command = CommandUnreadable
		return d
	}
	v, err := phpser.Decode(cmd)
	if err != nil {
		d.CommandErr = err
		if d.Command == CommandPlain {
			d.Command = CommandUnreadable
		}
		return d
	}
	// The properties every queued job carries at their defaults are noise
	// at 3 a.m.; real values (a queue name, a delay) still show.
	d.CommandText = phpser.FormatWith(v, phpser.FormatOptions{HideNoise: true, MaxString: 500})
	return d
}
