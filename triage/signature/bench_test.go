package signature

import "testing"

func BenchmarkNormalize(b *testing.B) {
	msg := `SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'jane@example.com' for key 'users_email_unique' (SQL: insert into "users" ("email") values (jane@example.com))`
	for b.Loop() {
		Normalize(msg)
	}
}

func BenchmarkNormalizeShort(b *testing.B) {
	for b.Loop() {
		Normalize(`No query results for model [App\Models\Order] 1042`)
	}
}
