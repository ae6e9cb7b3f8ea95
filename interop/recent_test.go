package interop

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shownJob is the part of `show --json` (docs/json.md) these tests read.
type shownJob struct {
	triagedJob
	Envelope struct {
		BatchID                 *string         `json:"batch_id"`
		CreatedAt               *time.Time      `json:"created_at"`
		Delay                   *int64          `json:"delay"`
		DeleteWhenMissingModels *bool           `json:"delete_when_missing_models"`
		LogContext              json.RawMessage `json:"log_context"`
		Tags                    []string        `json:"tags"`
	} `json:"envelope"`
	Exceptions []struct {
		Class   string `json:"class"`
		Message string `json:"message"`
		Frames  []struct {
			Index int    `json:"index"`
			Raw   string `json:"raw"`
		} `json:"frames"`
	} `json:"exceptions"`
}

// show runs `show ID --json` and `show ID --frames 0` against dsn.
func (j jobtriage) show(t *testing.T, dsn, id string) (shownJob, string) {
	t.Helper()
	var doc shownJob
	runJSON(t, j, &doc, "show", id, "--json", "--dsn", dsn)
	text, stderr, err := j.run("show", id, "--frames", "0", "--dsn", dsn)
	if err != nil {
		t.Fatalf("jobtriage show %s: %v\n%s", id, err, stderr)
	}
	return doc, text
}

// TestRecentRowShapes: rows real Laravel 8.83, 10.48 and 13.31 workers
// failed with interop:dispatch-recent, read by `failed`, `failed --group`,
// `show` and `retry --dry-run` on SQLite (the payload and exception texts
// do not depend on the database):
//
//   - a job past its timeout: 10+ writes TimeoutExceededException "… has
//     timed out." where 8.83 wrote MaxAttemptsExceededException; both are
//     parsed (class, message) and signed alike: one group of one job, its
//     message kept whole;
//   - one queued closure failing twice: one signature, the same on every
//     Laravel and PHP (8.2's {closure}, 8.4's {closure:…} frames), and every
//     frame of it shown whole by `show`, PHP 8.4's spanning several lines;
//   - Laravel 12–13's payload keys (createdAt, delay, data.batchId of a
//     batched job, illuminate:log:context of a unique job,
//     deleteWhenMissingModels) in `show` and `show --json`, absent where
//     the Laravel writes none; `retry --dry-run` counts the jobs whose
//     payload says deleteWhenMissingModels, and on 13 such a job whose
//     model is gone is deleted by the worker after the retry with no new
//     failed_jobs row, as the dry run warns.
func TestRecentRowShapes(t *testing.T) {
	requireInterop(t)
	bin := buildJobtriage(t)
	// The closure's signature names its cause, which a PHP upgrade does not
	// change: 8.83 runs PHP 8.2, 10.48 and 13.31 PHP 8.4. Compared once
	// every Laravel's subtest has run.
	var mu sync.Mutex
	closureSignatures := map[string]string{} // Laravel version → signature
	t.Cleanup(func() {
		distinct := map[string]bool{}
		for _, sig := range closureSignatures {
			distinct[sig] = true
		}
		if len(distinct) > 1 {
			t.Errorf("the closure signs differently across Laravel/PHP versions: %v", closureSignatures)
		}
	})
	forEachLaravel(t, func(t *testing.T, lv laravelTarget) {
		t.Parallel() // each on its own SQLite file
		s := failScenario(t, lv, sqliteDialect(t), "interop:dispatch-recent")
		dsn := s.dialect.dsn
		var listed triagedJobs
		runJSON(t, bin, &listed, "failed", "--json", "--dsn", dsn)
		var reported []reportedJob
		byUUID := map[string]triagedJob{}
		for _, j := range listed.Jobs {
			reported = append(reported, j.reportedJob)
			byUUID[j.UUID] = j
		}
		checkReport(t, s, reported)
		var groups struct {
			Signatures []struct {
				reportedSignature
				ExceptionClass    string `json:"exception_class"`
				MessageNormalized string `json:"exception_message_normalized"`
			} `json:"signatures"`
		}
		runJSON(t, bin, &groups, "failed", "--group", "--json", "--limit", "0", "--dsn", dsn)

		var closures []string // signatures of the closure's failures
		wantMissingModels := 0
		for _, want := range s.manifest.Failures {
			got := byUUID[want.UUID]
			shown, text := bin.show(t, dsn, want.UUID)
			if shown.Signature != got.Signature || shown.Class != want.Class {
				t.Errorf("%s: show says %s / %s, failed --json %s / %s", want.Key, shown.Class, shown.Signature, got.Class, got.Signature)
			}
			if len(shown.Exceptions) == 0 || shown.Exceptions[0].Class != want.ExceptionClass || shown.Exceptions[0].Message != want.ExceptionMessage {
				t.Errorf("%s: show --json exceptions %+v, want %s: %s first", want.Key, shown.Exceptions, want.ExceptionClass, want.ExceptionMessage)
			}
			for _, part := range []string{want.ExceptionClass, want.ExceptionMessage} {
				if !strings.Contains(text, part) {
					t.Errorf("%s: show does not print %q:\n%s", want.Key, part, text)
				}
			}
			checkRecentKeys(t, s, want, shown, text)
			if want.DeleteWhenMissingModels != nil && *want.DeleteWhenMissingModels {
				wantMissingModels++
			}
			switch {
			case want.Key == "render-report-timeout":
				// Signed like any other failure: class, exception class and
				// the message, which has no variable part.
				n := 0
				for _, g := range groups.Signatures {
					if g.ID == got.Signature {
						n++
						if g.Count != 1 || g.Class != want.Class || g.ExceptionClass != want.ExceptionClass || g.MessageNormalized != want.ExceptionMessage {
							t.Errorf("timeout: group %+v, want one %s job, %s: %s", g, want.Class, want.ExceptionClass, want.ExceptionMessage)
						}
					}
				}
				if n != 1 {
					t.Errorf("timeout: signature %s is in %d groups of failed --group, want 1", got.Signature, n)
				}
			case strings.HasPrefix(want.Key, "queued-closure-"):
				closures = append(closures, got.Signature)
				checkClosureFrames(t, lv, want, shown, text)
			}
		}
		if len(closures) != 2 || closures[0] != closures[1] {
			t.Errorf("the closure's two failures sign as %v, want one signature twice", closures)
		} else {
			mu.Lock()
			closureSignatures[lv.version] = closures[0]
			mu.Unlock()
			for _, g := range groups.Signatures {
				if g.ID == closures[0] && g.Count != 2 {
					t.Errorf("failed --group counts %d jobs for the closure's signature, want 2", g.Count)
				}
			}
		}

		var dry struct {
			DryRun                  bool `json:"dry_run"`
			Retried                 int  `json:"retried"`
			DeleteWhenMissingModels int  `json:"delete_when_missing_models"`
		}
		runJSON(t, bin, &dry, "retry", "all", "--dry-run", "--json", "--dsn", dsn)
		if !dry.DryRun || dry.Retried != len(s.manifest.Failures) || dry.DeleteWhenMissingModels != wantMissingModels {
			t.Errorf("retry all --dry-run: %+v, want %d jobs, %d of them with deleteWhenMissingModels", dry, len(s.manifest.Failures), wantMissingModels)
		}
		if laravelAtLeast13(lv) {
			checkMissingModelRetry(t, bin, s)
		}
	})
}

// checkRecentKeys compares Laravel 12–13's payload keys in show --json
// and show with what the dispatch expects of the running Laravel.
func checkRecentKeys(t *testing.T, s *scenario, want expectedFailure, shown shownJob, text string) {
	t.Helper()
	e := shown.Envelope
	if diff := cmp.Diff(want.DeleteWhenMissingModels, e.DeleteWhenMissingModels); diff != "" {
		t.Errorf("%s: delete_when_missing_models (-want +got):\n%s", want.Key, diff)
	}
	if diff := cmp.Diff(want.Delay, e.Delay); diff != "" {
		t.Errorf("%s: delay (-want +got):\n%s", want.Key, diff)
	}
	batch := ""
	if e.BatchID != nil {
		batch = *e.BatchID
	}
	if batch != want.BatchID {
		t.Errorf("%s: batch_id %q, want %q", want.Key, batch, want.BatchID)
	}
	switch {
	case want.CreatedAt && e.CreatedAt == nil:
		t.Errorf("%s: no created_at", want.Key)
	case want.CreatedAt && (e.CreatedAt.Before(s.started) || e.CreatedAt.After(s.finished)):
		t.Errorf("%s: created_at %s is outside the run [%s, %s]", want.Key, e.CreatedAt, s.started, s.finished)
	case !want.CreatedAt && e.CreatedAt != nil:
		t.Errorf("%s: created_at %s, but this Laravel writes none", want.Key, e.CreatedAt)
	}
	// Laravel's Context records a unique job's lock; nothing else here
	// carries any context.
	hasContext := len(e.LogContext) > 0 && string(e.LogContext) != "null"
	if wantContext := want.UniqueID != "" && want.CreatedAt; hasContext != wantContext {
		t.Errorf("%s: log_context %s, want one: %v", want.Key, e.LogContext, wantContext)
	} else if hasContext && !strings.Contains(string(e.LogContext), want.UniqueID) {
		t.Errorf("%s: log_context %s does not name the lock of %q", want.Key, e.LogContext, want.UniqueID)
	}

	// show prints each key the payload has, under Laravel's name.
	lines := map[string]bool{
		"deleteWhenMissingModels true":   want.DeleteWhenMissingModels != nil && *want.DeleteWhenMissingModels,
		"batchId        " + want.BatchID: want.BatchID != "",
		"delay          1s":              want.Delay != nil && *want.Delay == 1,
		"createdAt      ":                want.CreatedAt,
		"log:context    {":               hasContext,
	}
	for line, present := range lines {
		if strings.Contains(text, line) != present {
			t.Errorf("%s: show prints %q: %v, want %v\n%s", want.Key, line, !present, present, text)
		}
	}
}

// checkClosureFrames: every frame of the closure's exception is printed
// whole by show, and under PHP 8.4 (Laravel 10+ here) the frames name
// closures {closure:…}, the queued closure's own spanning several lines.
func checkClosureFrames(t *testing.T, lv laravelTarget, want expectedFailure, shown shownJob, text string) {
	t.Helper()
	if len(shown.Exceptions) == 0 {
		return
	}
	multiline, named := 0, 0
	out := strings.Split(text, "\n")
	for _, f := range shown.Exceptions[0].Frames {
		if strings.Contains(f.Raw, "\n") {
			multiline++
		}
		if strings.Contains(f.Raw, "{closure:") {
			named++
		}
		if !printedWhole(out, fmt.Sprintf("#%d %s", f.Index, f.Raw)) {
			t.Errorf("%s: show does not print frame #%d whole:\n%s\n--- show:\n%s", want.Key, f.Index, f.Raw, text)
		}
	}
	if lv.version == "8.83" {
		return
	}
	if multiline == 0 || named == 0 {
		t.Errorf("%s: %d frames span lines, %d name a closure {closure:…}; PHP 8.4 writes both", want.Key, multiline, named)
	}
}

// printedWhole reports whether the lines of block are printed one after
// the other, each at the end of an output line (show indents them).
func printedWhole(out []string, block string) bool {
	want := strings.Split(block, "\n")
	for i := range out {
		if !strings.HasSuffix(out[i], want[0]) {
			continue
		}
		k := 1
		for ; k < len(want) && i+k < len(out); k++ {
			if !strings.HasSuffix(strings.TrimRight(out[i+k], " "), strings.TrimRight(want[k], " ")) {
				break
			}
		}
		if k == len(want) {
			return true
		}
	}
	return false
}

// checkMissingModelRetry deletes the model of the delayed EmailCustomer
// job and retries it: a Laravel 13 worker deletes it, as its payload's
// deleteWhenMissingModels says, with no new failed_jobs row and no run.
func checkMissingModelRetry(t *testing.T, bin jobtriage, s *scenario) {
	t.Helper()
	var job expectedFailure
	for _, f := range s.manifest.Failures {
		if f.CustomerID != 0 {
			job = f
		}
	}
	if job.UUID == "" {
		t.Fatal("manifest has no job carrying a model")
	}
	s.app.php(t, fmt.Sprintf(`if (App\Models\Customer::whereKey(%d)->delete() !== 1) { exit(1); }`, job.CustomerID))
	s.app.setFlag(t)
	stdout, stderr, err := bin.run("retry", job.UUID, "--yes", "--dsn", s.dialect.dsn)
	if err != nil {
		t.Fatalf("retry %s: %v\n%s\n%s", job.UUID, err, stdout, stderr)
	}
	s.app.drain(t)
	if st := s.app.status(t); st.Failed != len(s.manifest.Failures)-1 || st.Jobs != 0 {
		t.Errorf("after the retry: %d failed, %d queued; want %d failed (the job deleted, not failed again)\n%s", st.Failed, st.Jobs, len(s.manifest.Failures)-1, s.app.log())
	}
	if got := s.app.readResults(t); len(got) != 0 {
		t.Errorf("the job whose model is gone ran: %v", got)
	}
}
