package stress

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// restoreRaceRows sizes TestRestoreTwiceAtOnce: many restore batches, so
// the two runs meet in many of them.
const restoreRaceRows = 50_000

// restoreReport is the part of `restore --json` this test reads.
type restoreReport struct {
	Read     int64 `json:"read"`
	Restored int64 `json:"restored"`
	Present  int64 `json:"present"`
}

// TestRestoreTwiceAtOnce archives a backlog with `prune --archive` and
// starts two `restore` processes of that archive at the same moment, into a
// failed_jobs with and without the uuid unique index (an app that never
// ran Laravel 8's migration, or dropped it): between them they must put
// every row back exactly once, under its own id and byte for byte, and
// their reports must add up — each row restored by one run and found
// present by the other.
func TestRestoreTwiceAtOnce(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		for _, unique := range []bool{false, true} {
			name := driver + "/without-unique-index"
			if unique {
				name = driver + "/with-unique-index"
			}
			t.Run(name, func(t *testing.T) {
				start := time.Now()
				s, path, orig := seedArchived(t, bin, driver, !unique)
				race := time.Now()
				args := []string{"restore", path, "--json", "--dsn", s.dsn}
				procs := []*process{bin.start(t, args...), bin.start(t, args...)}
				var sum restoreReport
				for i, p := range procs {
					if code := p.wait(t); code != 0 {
						t.Fatalf("restore %d exited %d: %s", i+1, code, p.stderr.String())
					}
					var r restoreReport
					if err := json.Unmarshal(p.stdout.Bytes(), &r); err != nil {
						t.Fatalf("restore %d: --json output: %v\n%.500s", i+1, err, p.stdout.String())
					}
					if r.Read != restoreRaceRows {
						t.Errorf("restore %d read %d of %d archived rows", i+1, r.Read, restoreRaceRows)
					}
					t.Logf("restore %d: %d restored, %d present", i+1, r.Restored, r.Present)
					sum.Restored += r.Restored
					sum.Present += r.Present
				}
				t.Logf("both runs done in %s", time.Since(race).Round(time.Millisecond))
				var rows, uuids int
				if err := s.db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT uuid) FROM failed_jobs").Scan(&rows, &uuids); err != nil {
					t.Fatal(err)
				}
				if rows != uuids || rows != restoreRaceRows {
					t.Fatalf("%d rows with %d distinct uuids after two restores of %d archived rows: %d restored twice",
						rows, uuids, restoreRaceRows, rows-uuids)
				}
				if sum.Restored != restoreRaceRows || sum.Present != restoreRaceRows {
					t.Errorf("the two runs report %d restored and %d present between them, want %d each", sum.Restored, sum.Present, restoreRaceRows)
				}
				if got := s.rowDigests(t); !sameDigests(got, orig) {
					t.Errorf("restored rows differ: %s", diffDigests(got, orig))
				}
				t.Logf("%s: total %s", name, time.Since(start).Round(time.Millisecond))
			})
		}
	}
}

// TestRestoreBesideRetryAll runs `retry all` while a `restore` into a
// failed_jobs without the uuid unique index is under way: the retry takes
// row locks and never the restore lock, so neither waits for the other in
// a cycle; both finish, and every job is in failed_jobs or in jobs once.
func TestRestoreBesideRetryAll(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			s, path, _ := seedArchived(t, bin, driver, true)
			restore := bin.start(t, "restore", path, "--dsn", s.dsn)
			for n := 0; n == 0; time.Sleep(10 * time.Millisecond) {
				if err := s.db.QueryRow("SELECT COUNT(*) FROM failed_jobs").Scan(&n); err != nil {
					t.Fatal(err)
				}
			}
			retry := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
			for _, p := range []*process{restore, retry} {
				if code := p.wait(t); code != 0 {
					t.Fatalf("%s exited %d: %s", p.cmd.Args[1], code, p.stderr.String())
				}
			}
			moved := s.census(t, "after restore beside retry all")
			t.Logf("retry all moved %d of %d restored jobs: %s", moved, restoreRaceRows, strings.TrimSpace(retry.stdout.String()))
		})
	}
}

// seedArchived seeds restoreRaceRows failed jobs, archives and deletes
// them all with `prune --archive` and, dropUnique, drops failed_jobs' uuid
// unique index; it returns the database, the archive's path and the rows
// as they were before the prune.
func seedArchived(t *testing.T, bin jobtriage, driver string, dropUnique bool) (*seeded, string, map[string]rowDigest) {
	t.Helper()
	s := seed(t, driver, restoreRaceRows)
	orig := s.rowDigests(t)
	path := filepath.Join(t.TempDir(), "failed.ndjson.gz")
	p := bin.start(t, "prune", "--hours", pruneHours, "--yes", "--archive", path, "--dsn", s.dsn)
	if code := p.wait(t); code != 0 {
		t.Fatalf("prune --archive exited %d: %s", code, p.stderr.String())
	}
	if dropUnique {
		q := map[string]string{"postgres": `ALTER TABLE failed_jobs DROP CONSTRAINT failed_jobs_uuid_unique`,
			"mysql": "ALTER TABLE failed_jobs DROP INDEX failed_jobs_uuid_unique", "sqlite": `DROP INDEX failed_jobs_uuid_unique`}[driver]
		if _, err := s.db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return s, path, orig
}
