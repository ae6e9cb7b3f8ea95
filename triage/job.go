package triage

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/payload"
	"github.com/jobtriage/jobtriage/triage/signature"
)

// Job is one failed job as a listing shows it.
type Job struct {
	RowID            int64     `json:"row_id"`
	ID               string    `json:"id"`   // how the operator addresses it: uuid, or integer id
	UUID             string    `json:"uuid"` // "" for legacy rows and integer-mode tables
	Connection       string    `json:"connection"`
	Queue            string    `json:"queue"`
	Class            string    `json:"class"`
	ExceptionClass   string    `json:"exception_class"`
	ExceptionMessage string    `json:"exception_message"`
	FailedAt         time.Time `json:"failed_at"`
	Signature        string    `json:"signature"`
	// Problem says which columns of the row could not be read and why
	// ("queue is NULL; failed_at \"garbage\" is not a time"); the other
	// fields hold what could be read (FailedAt zero when it could not).
	Problem string `json:"problem,omitempty"`
}

// RowProblem is a column of a failed_jobs row not as Laravel writes it.
type RowProblem struct {
	Column string // "connection", "queue", "payload", "exception", "failed_at"
	Reason string // "is NULL", "\"garbage\" is not a time"
}

// ReasonNull is a RowProblem's reason for a NULL column.
const ReasonNull = "is NULL"

func (p RowProblem) String() string { return p.Column + " " + p.Reason }

// describeProblems joins a row's problems for a listing or a skip reason.
func describeProblems(ps []RowProblem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// RowName names a row for an operator: its row id and, where it has one,
// its uuid ("row 17 (uuid 9f…)"), so a message is enough to find it.
func RowName(r *FailedRow) string {
	if r.UUID != "" {
		return fmt.Sprintf("row %d (uuid %s)", r.ID, truncate(r.UUID, 64))
	}
	return fmt.Sprintf("row %d", r.ID)
}

// JobFromRow derives what a listing shows from a listing's row, or from a
// whole one cut by TopExceptionHead, to the same class and signature.
func JobFromRow(r *FailedRow) Job { return JobFromRowWith(r, signature.Normalize) }

// JobFromRowWith is JobFromRow with the normaliser given, so that a pass
// over many rows can use a signature.Cache.
func JobFromRowWith(r *FailedRow, normalize func(string) string) Job {
	j := jobWithoutSignature(r)
	j.ExceptionClass, j.ExceptionMessage = exception.Head(r.Exception)
	j.Signature = signature.ID(j.Class, j.ExceptionClass, normalize(j.ExceptionMessage))
	return j
}

// jobWithoutSignature is JobFromRow without the exception's head and the
// signature, which cost a tenth of a retry's CPU when unused.
func jobWithoutSignature(r *FailedRow) Job {
	j := Job{
		RowID:      r.ID,
		UUID:       r.UUID,
		ID:         r.UUID,
		Connection: r.Connection,
		Queue:      r.Queue,
		Class:      payload.JobClass(r.Payload),
		FailedAt:   r.FailedAt,
	}
	if len(r.Problems) > 0 {
		j.Problem = describeProblems(r.Problems)
	}
	if j.ID == "" {
		j.ID = strconv.FormatInt(r.ID, 10)
	}
	return j
}

// ParseRef reads an id as the operator typed it: all digits is a row id (so
// legacy NULL-uuid rows stay reachable); anything else is a uuid.
func ParseRef(s string) (Ref, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Ref{}, fmt.Errorf("%w: empty id", ErrInvalidInput)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n <= 0 {
			return Ref{}, fmt.Errorf("%w: id %d is not a valid row id", ErrInvalidInput, n)
		}
		return Ref{ID: n}, nil
	}
	if len(s) > 255 || strings.ContainsAny(s, "\x00\n\r") {
		return Ref{}, fmt.Errorf("%w: %q is neither a uuid nor an integer id", ErrInvalidInput, truncate(s, 40))
	}
	return Ref{UUID: s}, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// Cursor is a listing's opaque (base64) continuation: the last row id shown.
// The zero Cursor starts at the newest; CursorBefore(0) goes below id 0.
type Cursor struct {
	BeforeID int64
	atZero   bool // BeforeID 0 is a bound, not "from the newest"
}

// CursorBefore continues a listing below the row with this id.
func CursorBefore(id int64) Cursor { return Cursor{BeforeID: id, atZero: id == 0} }

// Bounded reports whether the cursor continues a listing.
func (c Cursor) Bounded() bool { return c.BeforeID != 0 || c.atZero }

const cursorPrefix = "v1:"

// below narrows f to the rows a cursor at id 0 continues with: a store's
// BeforeID 0 means no bound, so "below 0" is said as MaxID -1.
func (c Cursor) below(f Filter) Filter {
	if c.atZero && c.BeforeID == 0 && (f.MaxID == 0 || f.MaxID > -1) {
		f.MaxID = -1
	}
	return f
}

func (c Cursor) String() string {
	if !c.Bounded() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.FormatInt(c.BeforeID, 10)))
}

// ParseCursor reads a cursor printed by a previous listing.
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	digits, ok := strings.CutPrefix(string(raw), cursorPrefix)
	n, nerr := strconv.ParseInt(digits, 10, 64)
	if err != nil || !ok || nerr != nil {
		return Cursor{}, fmt.Errorf("%w: %q was not printed by jobtriage failed", ErrInvalidCursor, truncate(s, 40))
	}
	return CursorBefore(n), nil
}
