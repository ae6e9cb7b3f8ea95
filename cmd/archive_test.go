package cmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
)

func TestNewCmdArchiveFlags(t *testing.T) {
	h := newHarness(t, false)
	var prune *PruneOptions
	cmd := NewCmdFlush(h.f, func(_ context.Context, o *PruneOptions) error { prune = o; return nil })
	cmd.SetArgs([]string{"--archive", "x.ndjson.gz", "--yes"})
	if err := cmd.Execute(); err != nil || prune.Archive.Path != "x.ndjson.gz" || !prune.Flush {
		t.Fatalf("flush --archive: %v %+v", err, prune)
	}
	var forget *ForgetOptions
	cmd = NewCmdForget(h.f, func(_ context.Context, o *ForgetOptions) error { forget = o; return nil })
	cmd.SetArgs([]string{"--queue", "q", "--archive", "-"})
	if err := cmd.Execute(); err != nil || forget.Archive.Path != "-" {
		t.Fatalf("forget --archive -: %v %+v", err, forget)
	}
	var restore *RestoreOptions
	cmd = NewCmdRestore(h.f, func(_ context.Context, o *RestoreOptions) error { restore = o; return nil })
	cmd.SetArgs([]string{"a.gz", "--dry-run", "--json"})
	if err := cmd.Execute(); err != nil || restore.Path != "a.gz" || !restore.DryRun || !restore.JSON {
		t.Fatalf("restore: %v %+v", err, restore)
	}
	var failed *FailedOptions
	cmd = NewCmdFailed(h.f, func(_ context.Context, o *FailedOptions) error { failed = o; return nil })
	cmd.SetArgs([]string{"--csv", "--queue", "emails", "--limit", "5"})
	if err := cmd.Execute(); err != nil || !failed.CSV || !failed.LimitSet || failed.Limit != 5 {
		t.Fatalf("failed --csv: %v %+v", err, failed)
	}
	// Refusals: stdout cannot carry both the archive and --json; restore
	// takes exactly one archive; --csv is an export of the listing only.
	for _, args := range [][]string{
		{"prune", "--archive", "-", "--json"},
		{"flush", "--archive", "-", "--json"},
		{"forget", "--queue", "q", "--archive", "-", "--json"},
		{"restore"},
		{"restore", "a", "b"},
		{"restore", ""},
		{"failed", "--csv", "--json"},
		{"failed", "--csv", "--group"},
		{"failed", "--csv", "--full"},
	} {
		if code := h.run(args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, h.errOut.String())
		}
	}
}

// failedRows reads failed_jobs whole, as the database holds it.
func failedRows(t *testing.T, s *sqlstore.Store) [][]any {
	t.Helper()
	rows, err := s.DB().Query("SELECT id, uuid, connection, queue, CAST(failed_at AS TEXT), payload, exception FROM failed_jobs ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		var id int64
		var uuid, conn, queue, at, payload, exc *string
		if err := rows.Scan(&id, &uuid, &conn, &queue, &at, &payload, &exc); err != nil {
			t.Fatal(err)
		}
		out = append(out, []any{id, *uuid, *conn, *queue, *at, *payload, *exc})
	}
	return out
}

func TestArchiveThenRestoreGivesBackTheRows(t *testing.T) {
	dsn, store := seed(t)
	before := failedRows(t, store)
	h := newHarness(t, false)
	path := filepath.Join(t.TempDir(), "failed.ndjson.gz")

	// A dry run says what it would archive and creates nothing.
	if code := h.run("prune", "--hours", "1", "--dry-run", "--archive", path, "--dsn", dsn); code != ExitOK {
		t.Fatalf("dry run exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), "Would delete 1 failed job") || !strings.Contains(h.out.String(), "would first be archived to "+path) {
		t.Errorf("dry run: %q", h.out.String())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the dry run created the archive: %v", err)
	}
	if code := h.run("prune", "--hours", "1", "--yes", "--archive", path, "--dsn", dsn, "--json"); code != ExitOK {
		t.Fatalf("prune exit %d: %s", code, h.errOut.String())
	}
	var doc struct {
		Deleted int64
		Archive *archiveDoc
	}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.Deleted != 1 || doc.Archive == nil || doc.Archive.Written != 1 || doc.Archive.Path != path {
		t.Fatalf("prune --json: %v %s", err, h.out.String())
	}
	if code := h.run("flush", "--yes", "--archive", path, "--dsn", dsn); code != ExitOK {
		t.Fatalf("flush exit %d: %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), "Deleted 3 failed jobs") || !strings.Contains(h.out.String(), "archived to "+path+" first (3 rows written)") {
		t.Errorf("flush: %q", h.out.String())
	}
	if n := len(failedRows(t, store)); n != 0 {
		t.Fatalf("%d rows left after the flush", n)
	}
	if code := h.run("restore", path, "--dry-run", "--dsn", dsn); code != ExitOK || !strings.HasPrefix(h.out.String(), "Would restore 4 failed jobs of 4 archived rows") {
		t.Fatalf("restore --dry-run: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	if n := len(failedRows(t, store)); n != 0 {
		t.Fatalf("the dry run restored %d rows", n)
	}
	if code := h.run("restore", path, "--dsn", dsn); code != ExitOK || !strings.HasPrefix(h.out.String(), "Restored 4 failed jobs of 4 archived rows") {
		t.Fatalf("restore: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	if after := failedRows(t, store); !reflect.DeepEqual(after, before) {
		t.Fatalf("restored rows differ:\n got %q\nwant %q", after, before)
	}
	// Again, from stdin: nothing twice.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.in.Write(raw)
	if code := h.run("restore", "-", "--json", "--dsn", dsn); code != ExitOK {
		t.Fatalf("restore again: exit %d %s", code, h.errOut.String())
	}
	var rdoc restoreDoc
	if err := json.Unmarshal(h.out.Bytes(), &rdoc); err != nil || rdoc.Read != 4 || rdoc.Present != 4 || rdoc.Restored != 0 || rdoc.CutOff != nil || rdoc.Unverified != 0 || rdoc.Conflicts == nil {
		t.Errorf("restore again: %v %s", err, h.out.String())
	}
}

func TestForgetArchivesToStdout(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, false)
	if code := h.run("forget", "--queue", "emails", "--yes", "--archive", "-", "--dsn", dsn); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(h.out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"uuid":"22222222-2222-4222-8222-222222222222"`) || !strings.Contains(lines[0], `"schema_version":2`) {
		t.Errorf("stdout is not the archive: %q", h.out.String())
	}
	if !strings.Contains(h.errOut.String(), "Deleted 1 failed job") || !strings.Contains(h.errOut.String(), "archived to - first") {
		t.Errorf("the report did not go to stderr: %q", h.errOut.String())
	}
	if n := len(failedRows(t, store)); n != 3 {
		t.Errorf("%d rows left", n)
	}
	// The archive on stdout restores.
	h.in.WriteString(h.out.String())
	if code := h.run("restore", "-", "--dsn", dsn); code != ExitOK || !strings.HasPrefix(h.out.String(), "Restored 1 failed job") {
		t.Errorf("restore: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	// forget --dry-run --json states the archive.
	if code := h.run("forget", "--queue", "emails", "--dry-run", "--archive", "x.ndjson", "--json", "--dsn", dsn); code != ExitOK {
		t.Fatalf("dry run exit %d: %s", code, h.errOut.String())
	}
	var doc forgetDoc
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.Archive == nil || doc.Archive.Written != 1 || doc.Archive.Path != "x.ndjson" {
		t.Errorf("dry run json: %v %s", err, h.out.String())
	}
}

func TestRestoreRefusesBadArchives(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.ndjson")
	if err := os.WriteFile(bad, []byte("{\"id\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := h.run("restore", bad, "--dsn", dsn); code != ExitUsage || strings.Count(h.errOut.String(), "\n") != 1 {
		t.Errorf("bad archive: exit %d, %q", code, h.errOut.String())
	}
	if code := h.run("restore", filepath.Join(dir, "missing.ndjson"), "--dsn", dsn); code != ExitUsage || strings.Count(h.errOut.String(), "\n") != 1 {
		t.Errorf("missing archive: exit %d, %q", code, h.errOut.String())
	}
	// A torn last line of a format 1 archive: refused, but for --verified-part.
	good := `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":77,"uuid":"77777777-7777-4777-8777-777777777777","connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","payload":"{}","exception":"E"}`
	torn := filepath.Join(dir, "torn.ndjson")
	if err := os.WriteFile(torn, []byte(good+"\n"+good[:40]), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := h.run("restore", torn, "--dsn", dsn); code != ExitUsage || !strings.Contains(h.errOut.String(), "is cut off at line 2 (its last line is torn)") {
		t.Errorf("torn archive: exit %d %q %q", code, h.out.String(), h.errOut.String())
	}
	if code := h.run("restore", torn, "--verified-part", "--dsn", dsn); code != ExitOK || !strings.Contains(h.errOut.String(), "cut off at line 2") ||
		!strings.Contains(h.errOut.String(), "1 record of format 1") || !strings.HasPrefix(h.out.String(), "Restored 1 failed job of 1") {
		t.Errorf("torn archive, --verified-part: exit %d %q %q", code, h.out.String(), h.errOut.String())
	}
	// An archive that is not ours is not appended to.
	if code := h.run("prune", "--hours", "1", "--yes", "--archive", bad, "--dsn", dsn); code != ExitUsage {
		t.Errorf("prune into a foreign file: exit %d %s", code, h.errOut.String())
	}
	if b, _ := os.ReadFile(bad); string(b) != "{\"id\":1}\n" {
		t.Errorf("the foreign file changed: %q", b)
	}
}

func TestFailedCSV(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	if code := h.run("failed", "--csv", "--dsn", dsn); code != ExitOK {
		t.Fatalf("exit %d: %s", code, h.errOut.String())
	}
	out := h.out.String()
	if !strings.HasPrefix(out, "id,connection,queue,class,exception,message,failed_at\r\n") {
		t.Errorf("header: %q", out)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 {
		t.Fatalf("%d records, want header + 4", len(recs))
	}
	// Newest first, as the listing; times absolute.
	if recs[1][0] != "44444444-4444-4444-8444-444444444444" || recs[4][6] != "2026-11-30T10:00:00Z" {
		t.Errorf("order or time: %q", recs)
	}
	// The hostile message keeps its words; its escapes are made inert.
	if bytes.ContainsRune([]byte(out), 0x1b) || !strings.Contains(recs[2][5], `SMTP \x1b]52;c;ZXZpbA==\x07 down`) {
		t.Errorf("hostile row: %q", recs[2])
	}
	if code := h.run("failed", "--csv", "--limit", "1", "--queue", "default", "--dsn", dsn); code != ExitOK || strings.Count(h.out.String(), "\r\n") != 2 {
		t.Errorf("--limit 1: exit %d %q", code, h.out.String())
	}
	if code := h.run("failed", "--csv", "--signature", "0000000000", "--dsn", dsn); code == ExitOK {
		t.Errorf("unknown signature: exit %d", code)
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"plain":             "plain",
		"two\nlines, \"q\"": "two\nlines, \"q\"",
		"=HYPERLINK(x)":     "'=HYPERLINK(x)",
		"+1 more":           "'+1 more",
		"-5":                "-5",
		"@SUM(A1)":          "'@SUM(A1)",
		"red \x1b[31m":      `red \x1b[31m`,
		"":                  "",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArchiveRerunAfterACrash: a row archived by a run that died before its
// delete committed is in the archive and still in failed_jobs; the next
// run deletes it without writing it twice, and says so.
func TestArchiveRerunAfterACrash(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, false)
	path := filepath.Join(t.TempDir(), "a.ndjson")
	if code := h.run("forget", "--queue", "emails", "--yes", "--archive", path, "--dsn", dsn); code != ExitOK {
		t.Fatalf("forget: exit %d %s", code, h.errOut.String())
	}
	// The crash: the row is back as it was (restore), and archived.
	if code := h.run("restore", path, "--dsn", dsn); code != ExitOK {
		t.Fatalf("restore: exit %d %s", code, h.errOut.String())
	}
	if code := h.run("forget", "--queue", "emails", "--yes", "--archive", path, "--dsn", dsn); code != ExitOK {
		t.Fatalf("forget again: exit %d %s", code, h.errOut.String())
	}
	if !strings.Contains(h.out.String(), "(0 rows written, 1 row already there)") {
		t.Errorf("re-run: %q", h.out.String())
	}
	if b, _ := os.ReadFile(path); bytes.Count(b, []byte("\n")) != 2 {
		t.Errorf("the archive holds %d lines, want 1 record and its trailer", bytes.Count(b, []byte("\n")))
	}
	// Restored where another row took the id: a new id, said so.
	sqlDB := store.DB()
	if _, err := sqlDB.Exec("UPDATE failed_jobs SET id = 2 WHERE uuid = '44444444-4444-4444-8444-444444444444'"); err != nil {
		t.Fatal(err)
	}
	if code := h.run("restore", path, "--dsn", dsn); code != ExitOK || !strings.Contains(h.out.String(), "1 row under a new id") {
		t.Errorf("renumbered: exit %d %q %s", code, h.out.String(), h.errOut.String())
	}
	if n := len(failedRows(t, store)); n != 4 {
		t.Errorf("%d rows, want 4", n)
	}
}

// TestRestoreVerifiesFirst: an edited, cut or inconsistent archive is one
// line naming the file and the line, exit 2, and nothing restored; a cut
// one restores its verified part with --verified-part; conflicting
// records are named, exit 7.
func TestRestoreVerifiesFirst(t *testing.T) {
	dsn, store := seed(t)
	h := newHarness(t, false)
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.ndjson")
	if code := h.run("forget", "--queue", "default", "--yes", "--archive", plain, "--dsn", dsn); code != ExitOK {
		t.Fatalf("forget: exit %d %s", code, h.errOut.String())
	}
	good, _ := os.ReadFile(plain)
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	refused := map[string]struct{ path, want string }{
		"edited": {file("edited.ndjson", strings.Replace(string(good), "Podcast 7", "Podcast 9", 1)), "archive %s line 1: archive record 1 does not match its sum"},
		"no payload": {file("nopayload.ndjson", `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":77,"uuid":"u","connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","exception":"E"}`+"\n"),
			"archive %s line 1: archive record 77 has no payload"},
		"null uuid": {file("nulluuid.ndjson", `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":77,"uuid":null,"connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","payload":"{}","exception":"E"}`+"\n"),
			"archive %s line 1: a record with uuid null (a table without the column wrote it), and failed_jobs.uuid is NOT NULL"},
		"null payload": {file("nullpayload.ndjson", `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":77,"uuid":"u","connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","payload":null,"exception":"E"}`+"\n"),
			"archive %s line 1: a record with payload null, which failed_jobs declares NOT NULL; nothing restored"},
		"uuid mismatch": {file("mismatch.ndjson", `{"schema_version":1,"archived_at":"2026-12-01T00:00:00Z","id":77,"uuid":"u","connection":"database","queue":"default","failed_at":"2026-11-30 09:00:00","payload":"{\"uuid\":\"v\"}","exception":"E"}`+"\n"),
			`archive %s line 1: archive record 77: its uuid "u" is not its payload's, "v"`},
		"cut": {file("cut.ndjson", string(good[:len(good)-30])), "archive %s is cut off at line 1 (3 whole records from there, and no batch trailer)"},
	}
	for name, c := range refused {
		if code := h.run("restore", c.path, "--dsn", dsn); code != ExitUsage || strings.Count(h.errOut.String(), "\n") != 1 ||
			!strings.Contains(h.errOut.String(), fmt.Sprintf(c.want, c.path)) {
			t.Errorf("%s: exit %d %q", name, code, h.errOut.String())
		}
	}
	if n := len(failedRows(t, store)); n != 1 {
		t.Fatalf("a refused restore wrote: %d rows", n)
	}
	// A gzip archive cut in half: refused; --verified-part restores its
	// whole batches and says what it left out.
	gz := filepath.Join(dir, "a.ndjson.gz")
	if code := h.run("restore", plain, "--dsn", dsn); code != ExitOK {
		t.Fatal(h.errOut.String())
	}
	for _, q := range []string{"default", "emails"} {
		if code := h.run("forget", "--queue", q, "--yes", "--archive", gz, "--dsn", dsn); code != ExitOK {
			t.Fatalf("forget: exit %d %s", code, h.errOut.String())
		}
	}
	raw, _ := os.ReadFile(gz)
	half := file("half.ndjson.gz", string(raw[:len(raw)-20]))
	if code := h.run("restore", half, "--dsn", dsn); code != ExitUsage || !strings.Contains(h.errOut.String(), "is cut off at line 5 (1 whole record from there, and no batch trailer): a copy cut short") {
		t.Errorf("cut gzip: exit %d %q", code, h.errOut.String())
	}
	if code := h.run("restore", half, "--verified-part", "--json", "--dsn", dsn); code != ExitOK {
		t.Fatalf("--verified-part: exit %d %s", code, h.errOut.String())
	}
	var doc restoreDoc
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.Read != 3 || doc.Restored != 3 || doc.CutOff == nil || *doc.CutOff != (archive.Cut{Line: 5, Records: 1}) ||
		!strings.Contains(h.errOut.String(), "is cut off at line 5 (1 whole record from there, and no batch trailer): not restored") {
		t.Errorf("--verified-part: %v %s %s", err, h.out.String(), h.errOut.String())
	}
	// The same uuid twice with other content: named, the first restored, exit 7.
	rd, _ := archive.NewReader(bytes.NewReader(good))
	row, _ := rd.Next()
	changed := row
	changed.Exception = ptr("another failure")
	var twice bytes.Buffer
	w, _ := archive.Open(archive.Stdout, &twice, time.Now)
	if w.Write([]triage.RawRow{row}) != nil || w.Write([]triage.RawRow{changed}) != nil {
		t.Fatal("write")
	}
	conflict := file("conflict.ndjson", twice.String())
	if code := h.run("restore", conflict, "--json", "--dsn", dsn); code != ExitPartial ||
		!strings.Contains(h.errOut.String(), "archive "+conflict+" line 3: uuid "+*row.UUID+" differs from the record at line 1, which was restored: not restored") {
		t.Errorf("conflict: exit %d %q", code, h.errOut.String())
	}
	doc = restoreDoc{}
	if err := json.Unmarshal(h.out.Bytes(), &doc); err != nil || doc.Duplicates != 0 || doc.Present != 1 ||
		!reflect.DeepEqual(doc.Conflicts, []archive.Conflict{{UUID: *row.UUID, Line: 3, FirstLine: 1}}) {
		t.Errorf("conflict json: %v %s", err, h.out.String())
	}
}
