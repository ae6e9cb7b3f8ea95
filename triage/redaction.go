package triage

import "context"

// Redaction: with Service.Redact set, everything the read use-cases hand
// to people (listings, exports, group examples, show) has the values of the
// listed keys masked. Ids, signatures and classes are computed from the rows
// as stored, and nothing written back or archived passes through here.

func (s *Service) redactJob(j *Job) {
	j.ExceptionMessage = s.RedactText(j.ExceptionMessage)
}

// RedactText masks free text for people (an exception message).
func (s *Service) RedactText(text string) string {
	if s.Redact == nil {
		return text
	}
	return s.Redact.Text(text)
}

// redactRow is a masked copy of r; r itself when redaction is off.
func (s *Service) redactRow(r *FailedRow) *FailedRow {
	if s.Redact == nil || r == nil {
		return r
	}
	c := *r
	if r.Payload != nil {
		c.Payload = s.Redact.JSON(r.Payload)
	}
	c.Exception = s.Redact.Text(r.Exception)
	return &c
}

// redactSignatures masks each signature's example and message, in place.
func (s *Service) redactSignatures(sigs []Signature) []Signature {
	for i := range sigs {
		sigs[i].Example = s.RedactText(sigs[i].Example)
		sigs[i].Message = s.RedactText(sigs[i].Message)
	}
	return sigs
}

// redactCommand masks a decrypted command's serialization.
func (s *Service) redactCommand(cmd string) string {
	if s.Redact == nil {
		return cmd
	}
	if masked, ok := s.Redact.PHP(cmd); ok {
		return masked
	}
	return s.Redact.Text(cmd)
}

// GetFailed reads one whole row for people (failed --json --full), masked.
func (s *Service) GetFailed(ctx context.Context, ref Ref) (*FailedRow, error) {
	r, err := s.Store.GetFailed(ctx, ref)
	if err != nil {
		return nil, err
	}
	return s.redactRow(r), nil
}
