package stress

import (
	"context"
	"strings"
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

// poisonRows is the backlog of TestRetryAllPassesAPoisonRow: a few of
// retry's batches (triage.WriteBatch rows each).
const poisonRows = 5 * triage.WriteBatch / 2

// poisonOffset places the poison row inside retry's first batch.
const poisonOffset = 10

// exitPartial is jobtriage's exit code when jobs were skipped.
const exitPartial = 7

// TestRetryAllPassesAPoisonRow: one row that retry cannot move — a queue
// name longer than Laravel's varchar(255) jobs.queue on PostgreSQL and
// MySQL (before, every `retry all` failed at that batch, for good), a
// payload without "job" on SQLite (which holds any queue name) — is
// skipped and named by the real binary, and the other 4,999 jobs move.
func TestRetryAllPassesAPoisonRow(t *testing.T) {
	requireStress(t)
	bin := buildJobtriage(t)
	for _, driver := range []string{"postgres", "mysql", "sqlite"} {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			s := seed(t, driver, poisonRows)
			var ids []int64
			if err := s.db.Select(&ids, s.db.Rebind("SELECT id FROM failed_jobs ORDER BY id LIMIT ?"), poisonOffset+1); err != nil {
				t.Fatal(err)
			}
			id := ids[poisonOffset]
			var uuid string
			if err := s.db.Get(&uuid, s.db.Rebind("SELECT uuid FROM failed_jobs WHERE id = ?"), id); err != nil {
				t.Fatal(err)
			}
			q, arg, why := "UPDATE failed_jobs SET queue = ? WHERE id = ?", strings.Repeat("q", 300), "does not fit jobs.queue"
			if driver == "sqlite" {
				q, arg, why = "UPDATE failed_jobs SET payload = ? WHERE id = ?", `{"uuid":"`+uuid+`","data":{}}`, `no "job" string`
			}
			if _, err := s.db.ExecContext(ctx, s.db.Rebind(q), arg, id); err != nil {
				t.Fatal(err)
			}
			p := bin.start(t, "retry", "all", "--yes", "--dsn", s.dsn)
			code := p.wait(t)
			out := p.stdout.String() + p.stderr.String()
			if code != exitPartial {
				t.Fatalf("retry all exited %d, want %d (some skipped)\n%s", code, exitPartial, out)
			}
			if moved := s.census(t, "after retry all"); moved != poisonRows-1 {
				t.Fatalf("%d of %d jobs moved, want all but the poison row\n%s", moved, poisonRows, out)
			}
			var left string
			if err := s.db.Get(&left, "SELECT uuid FROM failed_jobs"); err != nil || left != uuid {
				t.Fatalf("failed_jobs keeps %q (%v), want the poison row %s", left, err, uuid)
			}
			if !strings.Contains(out, uuid) || !strings.Contains(out, why) {
				t.Errorf("the output does not name the poison row %s (id %d) and why (%s):\n%s", uuid, id, why, out)
			}
			t.Logf("%s: %s", driver, strings.TrimSpace(out))
		})
	}
}
