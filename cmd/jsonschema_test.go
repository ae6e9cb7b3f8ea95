package cmd

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// updateJSONGolden rewrites testdata/json/*.golden.json from the current
// output: go test ./cmd -run TestJSONSchemas -update-json.
var updateJSONGolden = flag.Bool("update-json", false, "rewrite cmd/testdata/json goldens")

// TestJSONSchemas pins the document of every command's --json (and
// --ndjson) output on the seed fixture and a fixed clock: a renamed key, a
// changed type or a dropped null shows up here as a diff, and must then be
// reflected in docs/json.md (and schema_version, if a key was removed or
// changed meaning).
func TestJSONSchemas(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code ExitCode
	}{
		{"failed", []string{"failed", "--json", "--limit", "2"}, ExitOK},
		{"failed-all", []string{"failed", "--json", "--limit", "0", "--queue", "emails"}, ExitOK},
		{"failed-ndjson-full", []string{"failed", "--ndjson", "--full", "--queue", "emails"}, ExitOK},
		{"failed-group", []string{"failed", "--group", "--json", "--limit", "2"}, ExitOK},
		{"show", []string{"show", "--json", "11111111-1111-4111-8111-111111111111"}, ExitOK},
		{"show-malformed", []string{"show", "--json", "44444444-4444-4444-8444-444444444444"}, ExitOK},
		{"retry-dry-run", []string{"retry", "all", "--dry-run", "--json"}, ExitPartial},
		{"retry", []string{"retry", "11111111-1111-4111-8111-111111111111", "--json"}, ExitOK},
		{"retry-canary-dry-run", []string{"retry", "all", "--canary", "1", "--follow", "--rate", "50/s", "--dry-run", "--json"}, ExitPartial},
		// No worker runs: the job is still waiting when the timeout passes.
		{"retry-follow", []string{"retry", "11111111-1111-4111-8111-111111111111", "--follow", "--follow-timeout", "1ms", "--json"}, ExitFollowTimeout},
		{"forget", []string{"forget", "22222222-2222-4222-8222-222222222222", "--yes", "--json"}, ExitOK},
		{"prune-dry-run", []string{"prune", "--hours", "1", "--dry-run", "--json"}, ExitOK},
		{"flush-dry-run", []string{"flush", "--dry-run", "--json"}, ExitOK},
		{"prune-archive-dry-run", []string{"prune", "--hours", "1", "--dry-run", "--archive", "archive.ndjson.gz", "--json"}, ExitOK},
		{"restore-dry-run", []string{"restore", filepath.Join("testdata", "archive.ndjson"), "--dry-run", "--json"}, ExitOK},
		{"monitor", []string{"monitor", "--json", "--window", "168h"}, ExitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			dsn, _ := seed(t) // each command on a fresh copy: some write
			h := newHarness(t, false)
			if code := h.run(append(c.args, "--dsn", dsn)...); code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, h.errOut.String())
			}
			// The target names the seed's temporary file.
			got := bytes.ReplaceAll(h.out.Bytes(), []byte(dsn), []byte("sqlite:SEED"))
			for _, line := range bytes.Split(bytes.TrimSpace(got), []byte("\n")) {
				if strings.HasSuffix(c.name, "ndjson-full") && !json.Valid(line) {
					t.Errorf("NDJSON line is not JSON: %s", line)
				}
			}
			if !strings.Contains(c.name, "ndjson") {
				var doc map[string]any
				if err := json.Unmarshal(got, &doc); err != nil || doc["schema_version"] != float64(jsonSchemaVersion) {
					t.Errorf("not one object with schema_version %d: %v\n%s", jsonSchemaVersion, err, got)
				}
			}
			if bytes.Contains(got, []byte(`\u003c`)) || bytes.Contains(got, []byte(`\u003e`)) || bytes.Contains(got, []byte("0001-01-01")) {
				t.Errorf("HTML escapes or a zero time:\n%s", got)
			}
			path := filepath.Join("testdata", "json", c.name+".golden.json")
			if *updateJSONGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-json to create it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s differs from %s (-want +got):\n%s", strings.Join(c.args, " "), path, diff)
			}
		})
	}
}

// TestAuditLineSchema pins the audit line (docs/json.md): the outcome line
// of a filtered retry, with what differs per machine and run replaced.
func TestAuditLineSchema(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	logPath := filepath.Join(t.TempDir(), "audit.log")
	if code := h.run("retry", "--queue", "emails", "--since", "2026-11-01", "--yes", "--dsn", dsn, "--audit-log", logPath); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	var doc map[string]any
	if err := json.Unmarshal(lines[len(lines)-1], &doc); err != nil {
		t.Fatal(err)
	}
	doc["run"], doc["user"], doc["host"] = "RUN", "USER", "HOST"
	doc["database"] = "DATABASE"
	args := doc["args"].([]any)
	for i, a := range args {
		if s, _ := a.(string); strings.HasPrefix(s, "sqlite:") || strings.HasSuffix(s, "audit.log") {
			args[i] = "PATH"
		}
	}
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "json", "audit-line.golden.json")
	if *updateJSONGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-json to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("audit line differs from %s (-want +got):\n%s", path, diff)
	}
}
