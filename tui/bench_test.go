package tui

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
	"github.com/jobtriage/jobtriage/triage/sqlstore"
	"github.com/jobtriage/jobtriage/triage/sqlstore/sqltest"
)

func TestFirstScreenShowsTheFirstSnapshot(t *testing.T) {
	f := seed()
	f.gate = make(chan struct{}) // the scan never ends on its own
	defer close(f.gate)
	out, err := FirstScreen(context.Background(), f, Options{Now: fixedNow, NoColor: true}, 80, 24)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "SyncInvoice") || !strings.Contains(out, "scanning 25%") {
		t.Fatalf("first screen:\n%s", out)
	}
}

// BenchmarkFirstScreen measures, through the real service on SQLite, the
// time from building the model to the first rendered screen with data. The
// 1M-row PostgreSQL run belongs to the benchmark suite, which calls
// FirstScreen the same way.
func BenchmarkFirstScreen(b *testing.B) {
	for _, rows := range []int{1000, 20000} {
		b.Run("sqlite/"+strconv.Itoa(rows), func(b *testing.B) {
			store := sqltest.OpenLaravel(b, "sqlite", sqlstore.SchemaLaravel8, time.UTC)
			batch := make([]sqltest.FailedFixture, 0, rows)
			for i := 1; i <= rows; i++ {
				class := `App\Jobs\Job` + strconv.Itoa(i%40)
				batch = append(batch, laravelRow(i, class, "default", "RuntimeException",
					"failure "+strconv.Itoa(i%7), clock.Add(-time.Duration(rows-i)*time.Second)))
			}
			sqltest.InsertFailed(b, store, batch...)
			svc := &triage.Service{Store: store, Now: fixedNow, Location: time.UTC}
			opts := Options{Now: fixedNow, NoColor: true}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				out, err := FirstScreen(context.Background(), svc, opts, 120, 40)
				if err != nil || !strings.Contains(out, "RuntimeException") {
					b.Fatalf("first screen (err %v):\n%s", err, out)
				}
			}
		})
	}
}
