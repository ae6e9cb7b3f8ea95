package stress

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/archive"
)

// pruneHours is the --hours of the archived prune: every seeded row
// failed long before it (TestPruneArchiveSurvivesSIGKILL checks).
const pruneHours = "0.01"

// TestPruneArchiveSurvivesSIGKILL kills `prune --archive` at random
// moments — inside a batch's select, its archive write and fsync, its
// delete or its commit — and checks after every kill that each seeded row
// is in failed_jobs or in the archive's whole records (never in neither),
// and no row is in the archive twice. A final run then completes, and
// every row is in the archive exactly once, byte for byte as stored (all
// seven columns, failed_at as the database's text); `restore` of that
// archive gives back the same rows under the same ids, and a second
// restore inserts nothing. PostgreSQL and SQLite archive to gzip, MySQL to
// plain NDJSON, so both torn-tail paths are exercised.
func TestPruneArchiveSurvivesSIGKILL(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	base := rngSeed(t)
	t.Logf("kill schedule seed %d (replay with %s=%d)", base, seedEnv, base)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			start := time.Now()
			s := seed(t, driver, seedRows)
			orig := s.rowDigests(t)
			name := "failed.ndjson.gz"
			if driver == "mysql" {
				name = "failed.ndjson"
			}
			path := filepath.Join(t.TempDir(), name)
			rng := rand.New(rand.NewPCG(base, streamOf("archive-"+driver)))
			kills := 5 + rng.IntN(4)
			midRun, torn := 0, 0
			deleted := 0
			args := []string{"prune", "--hours", pruneHours, "--yes", "--archive", path, "--dsn", s.dsn}
			for i := 1; i <= kills; i++ {
				var when string
				var fire <-chan time.Time
				p := bin.start(t, args...)
				if rng.IntN(4) == 0 {
					delay := 10*time.Millisecond + time.Duration(rng.Int64N(int64(300*time.Millisecond)))
					when, fire = delay.String()+" into the run", time.After(delay)
				} else {
					target := deleted + 1 + rng.IntN(max(1, (seedRows-deleted)*9/10))
					extra := time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
					when = fmt.Sprintf("%s after %d rows were deleted", extra, target)
					fire = s.afterDeleted(t, p.done, target, extra)
				}
				killed := false
				select {
				case <-p.done:
				case <-fire:
					killed = p.cmd.Process.Kill() == nil // SIGKILL
					<-p.done
				}
				if !killed {
					if code := exitCode(t, p.err); code != 0 {
						t.Fatalf("run %d exited %d before its kill: %s", i, code, p.stderr.String())
					}
				}
				s.awaitNoSessions(t)
				before := deleted
				var tornNow bool
				deleted, tornNow = s.archiveCensus(t, orig, path, fmt.Sprintf("after kill %d (%s)", i, when))
				if tornNow {
					torn++
				}
				if killed && deleted > before && deleted < seedRows {
					midRun++
				}
				// A SIGKILL inside write(2) is rare (one call per batch, into
				// the page cache), so half the kills also leave what one would:
				// a prefix of the next batch's record lines (a gzip member for
				// .gz), cut at a random byte. The next run must cut it off.
				if killed && deleted < seedRows && rng.IntN(2) == 0 {
					n := s.appendTornBatch(t, path, rng)
					if _, tornNow = s.archiveCensus(t, orig, path, fmt.Sprintf("after kill %d and a torn batch", i)); tornNow {
						torn++
					}
					t.Logf("kill %d: appended %d bytes of a torn batch, archive torn=%v", i, n, tornNow)
				}
				t.Logf("kill %d, %s: killed=%v, %d of %d rows deleted, archive torn=%v", i, when, killed, deleted, seedRows, tornNow)
			}
			final := time.Now()
			p := bin.start(t, args...)
			if code := p.wait(t); code != 0 {
				t.Fatalf("final prune exited %d: %s", code, p.stderr.String())
			}
			t.Logf("final run took %s: %s", time.Since(final).Round(time.Millisecond), strings.TrimSpace(p.stdout.String()))
			if n, _ := s.archiveCensus(t, orig, path, "after the final run"); n != seedRows {
				t.Fatalf("after the final run %d of %d rows are deleted", n, seedRows)
			}
			if st, err := os.Stat(path); err == nil {
				t.Logf("archive %s: %d bytes for %d rows", name, st.Size(), seedRows)
			}
			restoreStart := time.Now()
			p = bin.start(t, "restore", path, "--dsn", s.dsn)
			if code := p.wait(t); code != 0 {
				t.Fatalf("restore exited %d: %s", code, p.stderr.String())
			}
			t.Logf("restore took %s: %s", time.Since(restoreStart).Round(time.Millisecond), strings.TrimSpace(p.stdout.String()))
			if got := s.rowDigests(t); !sameDigests(got, orig) {
				t.Fatalf("restored rows differ: %s", diffDigests(got, orig))
			}
			p = bin.start(t, "restore", path, "--json", "--dsn", s.dsn)
			if code := p.wait(t); code != 0 || !strings.Contains(p.stdout.String(), `"restored": 0`) ||
				!strings.Contains(p.stdout.String(), fmt.Sprintf(`"present": %d`, seedRows)) {
				t.Fatalf("a second restore: exit %d, %s %s", code, p.stdout.String(), p.stderr.String())
			}
			if midRun == 0 {
				t.Errorf("no kill landed while part of the backlog was deleted; the schedule (seed %d) proved nothing", base)
			}
			t.Logf("%s: %d kills, %d mid-run, %d left a torn archive tail, total %s", driver, kills, midRun, torn, time.Since(start).Round(time.Millisecond))
			if torn == 0 {
				t.Logf("no run met a torn archive tail (the schedule, seed %d, injected none)", base)
			}
		})
	}
}

// rowDigest is a hash of a whole failed_jobs row: id, uuid, connection,
// queue, failed_at as the database's text, payload, exception.
type rowDigest [sha256.Size]byte

func digestOf(id int64, cols ...*string) rowDigest {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(id))
	h.Write(n[:])
	for _, c := range cols {
		if c == nil {
			h.Write([]byte{0})
			continue
		}
		binary.BigEndian.PutUint64(n[:], uint64(len(*c)))
		h.Write([]byte{1})
		h.Write(n[:])
		h.Write([]byte(*c))
	}
	var d rowDigest
	h.Sum(d[:0])
	return d
}

// rowDigests reads failed_jobs whole, by uuid.
func (s *seeded) rowDigests(t *testing.T) map[string]rowDigest {
	t.Helper()
	asText := map[string]string{"postgres": "CAST(failed_at AS text)", "mysql": "CAST(failed_at AS CHAR)", "sqlite": "CAST(failed_at AS TEXT)"}[s.driver]
	rows, err := s.db.QueryContext(context.Background(), "SELECT id, uuid, connection, queue, "+asText+", payload, exception FROM failed_jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := make(map[string]rowDigest, seedRows)
	for rows.Next() {
		var id int64
		var uuid, conn, queue, at, payload, exc *string
		if err := rows.Scan(&id, &uuid, &conn, &queue, &at, &payload, &exc); err != nil {
			t.Fatal(err)
		}
		out[*uuid] = digestOf(id, uuid, conn, queue, at, payload, exc)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameDigests(a, b map[string]rowDigest) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func diffDigests(got, want map[string]rowDigest) string {
	missing, changed, extra := 0, 0, 0
	for k, v := range want {
		if g, ok := got[k]; !ok {
			missing++
		} else if g != v {
			changed++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra++
		}
	}
	return fmt.Sprintf("%d missing, %d changed, %d extra of %d", missing, changed, extra, len(want))
}

// archiveCensus checks the archive against the seeded rows and the table:
// every whole record is a seeded row byte for byte and appears once, and
// every seeded row is in failed_jobs or in the archive. It returns how many
// rows are gone from failed_jobs and whether the archive ends torn.
func (s *seeded) archiveCensus(t *testing.T, orig map[string]rowDigest, path, when string) (deleted int, torn bool) {
	t.Helper()
	inTable := s.rowDigests(t)
	archived := map[string]int{}
	f, err := os.Open(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s: %v", when, err)
	}
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	if f != nil {
		defer f.Close()
		r, err := archive.NewReader(f)
		if err != nil {
			t.Fatalf("%s: read the archive: %v", when, err)
		}
		for {
			row, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: read the archive: %v", when, err)
			}
			if row.UUID == nil {
				problem("a record without uuid (id %d)", row.ID)
				continue
			}
			u := *row.UUID
			archived[u]++
			want, ok := orig[u]
			switch {
			case !ok:
				problem("the archive holds %s, which was never seeded", u)
			case digestOf(row.ID, row.UUID, row.Connection, row.Queue, row.FailedAt, row.Payload, row.Exception) != want:
				problem("the archive's %s differs from the stored row", u)
			case archived[u] == 2:
				problem("%s is in the archive twice", u)
			}
		}
		torn = r.Cut != nil
	}
	lost := 0
	for u := range orig {
		if _, ok := inTable[u]; ok {
			continue
		}
		deleted++
		if archived[u] == 0 {
			lost++
			problem("%s was deleted but is not in the archive", u)
		}
	}
	if len(problems) > 0 {
		t.Fatalf("%s: %d rows deleted without archive, and:\n  %s", when, lost, strings.Join(problems, "\n  "))
	}
	return deleted, torn
}

// afterDeleted fires extra after failed_jobs has lost at least target rows.
func (s *seeded) afterDeleted(t *testing.T, done <-chan struct{}, target int, extra time.Duration) <-chan time.Time {
	t.Helper()
	fire := make(chan time.Time, 1)
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
			}
			var n int
			if err := s.db.Get(&n, "SELECT COUNT(*) FROM failed_jobs"); err != nil {
				continue // SQLite may be busy with the run's commit: look again
			}
			if seedRows-n >= target {
				time.Sleep(extra)
				fire <- time.Now()
				return
			}
		}
	}()
	return fire
}

// TestArchiveWriterDigestMatchesTheStore keeps the census honest: a row
// read through the archive package digests as the table's own read does.
func TestArchiveWriterDigestMatchesTheStore(t *testing.T) {
	u, c, q, at, p, e := "u", "database", "default", "2026-11-30 10:00:00", `{"uuid":"u"}`, "E"
	row := triage.RawRow{ID: 7, UUID: &u, Connection: &c, Queue: &q, FailedAt: &at, Payload: &p, Exception: &e}
	path := filepath.Join(t.TempDir(), "a.ndjson")
	w, err := archive.Open(path, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]triage.RawRow{row}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f, _ := os.Open(path)
	defer f.Close()
	r, _ := archive.NewReader(f)
	got, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if digestOf(got.ID, got.UUID, got.Connection, got.Queue, got.FailedAt, got.Payload, got.Exception) != digestOf(7, &u, &c, &q, &at, &p, &e) {
		t.Error("digest of an archived row differs from the stored row's")
	}
	other := "x"
	if digestOf(7, &u, &c, &q, &at, &p, &other) == digestOf(7, &u, &c, &q, &at, &p, &e) {
		t.Error("the digest ignores the exception")
	}
}

// appendTornBatch leaves the archive as a run killed inside its write(2)
// would: it opens it as a run does (cutting a torn tail already there) and
// appends a random prefix of what the writer would write for the next
// batch of failed_jobs (the lowest ids): record lines, gzip-compressed
// into one member for a .gz archive. It returns the bytes appended.
// tornBatchRows is how many rows an injected torn batch is cut from.
const tornBatchRows = 20

// archivedUUIDs reads the uuids of the archive's whole records.
func (s *seeded) archivedUUIDs(t *testing.T, path string) map[string]bool {
	t.Helper()
	held := map[string]bool{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return held
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := archive.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return held
		}
		if err != nil {
			t.Fatal(err)
		}
		if row.UUID != nil {
			held[*row.UUID] = true
		}
	}
}

func (s *seeded) appendTornBatch(t *testing.T, path string, rng *rand.Rand) int {
	t.Helper()
	asText := map[string]string{"postgres": "CAST(failed_at AS text)", "mysql": "CAST(failed_at AS CHAR)", "sqlite": "CAST(failed_at AS TEXT)"}[s.driver]
	// The next batch of a real run holds only rows the archive does not
	// hold yet (a kill between a batch's fsync and its commit leaves rows
	// archived but not deleted, and the next run skips them), so neither
	// does the injected one.
	held := s.archivedUUIDs(t, path)
	var all []struct {
		ID   int64  `db:"id"`
		UUID string `db:"uuid"`
	}
	if err := s.db.Select(&all, "SELECT id, uuid FROM failed_jobs ORDER BY id"); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range all {
		if !held[r.UUID] && len(ids) < tornBatchRows {
			ids = append(ids, strconv.FormatInt(r.ID, 10))
		}
	}
	if len(ids) == 0 {
		return 0
	}
	rows, err := s.db.QueryContext(context.Background(), "SELECT id, uuid, connection, queue, "+asText+", payload, exception FROM failed_jobs WHERE id IN ("+strings.Join(ids, ",")+") ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	var batch []triage.RawRow
	for rows.Next() {
		var r triage.RawRow
		if err := rows.Scan(&r.ID, &r.UUID, &r.Connection, &r.Queue, &r.FailedAt, &r.Payload, &r.Exception); err != nil {
			t.Fatal(err)
		}
		batch = append(batch, r)
	}
	rows.Close()
	if len(batch) == 0 {
		return 0
	}
	var lines bytes.Buffer
	w, err := archive.Open(archive.Stdout, &lines, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(batch); err != nil {
		t.Fatal(err)
	}
	data := lines.Bytes()
	if strings.HasSuffix(path, ".gz") {
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(data)
		zw.Close()
		data = z.Bytes()
	}
	cut := 1 + rng.IntN(len(data)-1)
	// As the next run does before it writes: open the archive, which cuts
	// off a torn tail an earlier kill or injection left.
	a, err := archive.Open(path, nil, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data[:cut]); err != nil {
		t.Fatal(err)
	}
	return cut
}
