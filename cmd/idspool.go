package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// idSpool keeps the ids a bulk action touched in a temporary file instead of
// memory, for the audit line and --json: retry all of a million jobs would
// otherwise hold a million ids (about 140 bytes each) until it ends. Each
// line is one id as a JSON string, so ids (uuids read from the database,
// any text) cannot break the framing and are copied to JSON output as they
// are.
type idSpool struct {
	f *os.File
	w *bufio.Writer
	n int
}

func newIDSpool() (*idSpool, error) {
	f, err := os.CreateTemp("", "jobtriage-ids-*")
	if err != nil {
		return nil, fmt.Errorf("a temporary file for the ids touched: %w", err)
	}
	return &idSpool{f: f, w: bufio.NewWriter(f)}, nil
}

// Add records a batch's ids; it is a triage OnBatch callback.
func (s *idSpool) Add(ids []string) error {
	for _, id := range ids {
		b, err := json.Marshal(id)
		if err != nil {
			return err
		}
		s.w.Write(b) //nolint:errcheck // bufio keeps the first error for Flush
		s.w.WriteByte('\n')
	}
	s.n += len(ids)
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("recording the ids touched: %w", err)
	}
	return nil
}

// Len is the number of ids recorded.
func (s *idSpool) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// writeArray writes the ids as the elements of a JSON array (without the
// brackets), each after sep.
func (s *idSpool) writeArray(w io.Writer, sep string) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	sc := bufio.NewScanner(s.f)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	first := true
	for sc.Scan() {
		lead := sep
		if !first {
			lead = "," + sep
		}
		first = false
		if _, err := io.WriteString(w, lead); err != nil {
			return err
		}
		if _, err := w.Write(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading back the ids touched: %w", err)
	}
	_, err := s.f.Seek(0, io.SeekEnd)
	return err
}

// Close removes the file.
func (s *idSpool) Close() {
	if s == nil {
		return
	}
	s.f.Close()
	os.Remove(s.f.Name())
}

// writeJSONWithIDs is writeJSON for a result whose "ids" member (an empty
// array when v is encoded) is streamed from the spool.
func writeJSONWithIDs(w io.Writer, v any, ids *idSpool) error {
	var buf bytes.Buffer
	if err := writeJSON(&buf, v); err != nil {
		return err
	}
	const member = "\n  \"ids\": []"
	at := bytes.Index(buf.Bytes(), []byte(member))
	if ids.Len() == 0 || at < 0 {
		_, err := w.Write(buf.Bytes())
		return err
	}
	bw := bufio.NewWriter(w)
	bw.Write(buf.Bytes()[:at])             //nolint:errcheck // Flush reports it
	bw.WriteString(member[:len(member)-1]) //nolint:errcheck
	if err := ids.writeArray(bw, "\n    "); err != nil {
		return err
	}
	bw.WriteString("\n  ]")                //nolint:errcheck
	bw.Write(buf.Bytes()[at+len(member):]) //nolint:errcheck
	return bw.Flush()
}
