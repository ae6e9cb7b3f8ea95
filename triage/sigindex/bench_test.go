package sigindex

import (
	"context"
	"testing"
	"time"

	"github.com/jobtriage/jobtriage/triage"
)

// BenchmarkWarmGroup1M: a warm refresh (nothing new) and a grouping of
// 1,000,000 indexed rows, without a database: the Go side of a warm
// failed --group.
func BenchmarkWarmGroup1M(b *testing.B) {
	f := newFake()
	f.fill(1, 1_000_000)
	dir := b.TempDir()
	ix := New(Options{Dir: dir, Source: f})
	if _, err := ix.refresh(context.Background(), time.UTC); err != nil {
		b.Fatal(err)
	}
	svc := &triage.Service{Store: nil, Now: func() time.Time { return base }, Location: time.UTC, Index: ix}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := svc.Group(context.Background(), triage.GroupParams{}); err != nil {
			b.Fatal(err)
		}
	}
}
