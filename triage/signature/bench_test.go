package signature

import (
	"strings"
	"testing"
)

// benchMessages are the shapes the group pass meets: a short message, a
// typical query exception, and a dense 2 KB one (a long insert).
var benchMessages = []struct{ name, msg string }{
	{"short", `No query results for model [App\Models\Order] 1042`},
	{"sql", `SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'jane@example.com' for key 'users_email_unique' (SQL: insert into "users" ("email") values (jane@example.com))`},
	{"sql-2KB", denseSQL()},
}

func denseSQL() string {
	var b strings.Builder
	b.WriteString("SQLSTATE[22001]: String data, right truncated: 1406 Data too long for column 'body' at row 1 (SQL: insert into `posts` (`title`, `body`, `user_id`, `uuid`, `status`, `updated_at`, `created_at`) values ")
	for i := 0; b.Len() < MaxMessageBytes-200; i++ {
		b.WriteString("(Quarterly report for region 7, see https://example.com/reports/2024/q1?id=9931, ")
		b.WriteString("42, 9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d, 'draft', 2024-03-01 12:30:00, 2024-03-01 12:30:00), ")
	}
	b.WriteString("(last, 1, 2, 3))")
	return b.String()
}

func BenchmarkNormalize(b *testing.B) {
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				Normalize(m.msg)
			}
		})
	}
}

// BenchmarkNormalizeReference measures the regexp implementation Normalize
// replaced, on the same messages, for the before/after comparison.
func BenchmarkNormalizeReference(b *testing.B) {
	for _, m := range benchMessages {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(m.msg)))
			for b.Loop() {
				normalizeReference(m.msg)
			}
		})
	}
}
