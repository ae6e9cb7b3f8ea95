// The fuzz step of .ci/run builds with the jobtriage_fuzz tag and leaves
// this file out: it imports demo, which pulls in the SQLite driver, and
// go test -fuzz instruments every dependency, so this one import would make
// the signature targets' build cost more than their fuzzing.

//go:build !jobtriage_fuzz

package signature_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/internal/demo"
	"github.com/jobtriage/jobtriage/triage/exception"
	"github.com/jobtriage/jobtriage/triage/signature"
)

// The corpus test lives outside package signature: demo reaches
// signature through triage, which an internal test may not import.

// corpus gathers every real message the repository holds: the rows real
// Laravel wrote, the exception fixtures, and the demo generator's output.
// Whole exception texts (traces, paths, closures) are included too, and
// each of their lines: they are dense with what the passes look for.
func corpus(t testing.TB) []string {
	t.Helper()
	var texts []string
	rows, err := filepath.Glob("../../testdata/laravel-rows/*.json")
	if err != nil || len(rows) == 0 {
		t.Fatalf("no laravel rows: %v", err)
	}
	for _, path := range rows {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []struct {
			Exception string `json:"exception"`
			Expect    struct {
				Message string `json:"exception_message"`
			} `json:"expect"`
		}
		if err := json.Unmarshal(data, &rows); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, r := range rows {
			texts = append(texts, r.Exception, r.Expect.Message)
		}
	}
	fixtures, err := filepath.Glob("../exception/testdata/*.txt")
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no exception fixtures: %v", err)
	}
	for _, path := range fixtures {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	g, err := demo.NewGenerator(demo.Options{Failed: 3000, Seed: 7,
		Now: time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, ok, err := g.NextFailed()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		texts = append(texts, r.Exception)
	}
	var messages []string
	for _, text := range texts {
		_, msg := exception.Head(text)
		messages = append(messages, msg, text)
		for _, c := range exception.Parse(text) {
			messages = append(messages, c.Message)
		}
		messages = append(messages, strings.Split(text, "\n")...)
	}
	return messages
}

func TestNormalizeMatchesReferenceOnCorpus(t *testing.T) {
	messages := corpus(t)
	seen := map[string]bool{}
	for _, m := range messages {
		if seen[m] {
			continue
		}
		seen[m] = true
		if got, want := signature.Normalize(m), signature.NormalizeReference(m); got != want {
			t.Errorf("Normalize(%q)\n got %q\nwant %q", m, got, want)
		}
	}
	t.Logf("%d distinct messages", len(seen))
	if len(seen) < 1000 {
		t.Errorf("corpus has only %d distinct messages", len(seen))
	}
}
