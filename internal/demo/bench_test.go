package demo

import "testing"

// BenchmarkNextFailed measures generation alone (no database), at the sizes
// the 1M-row benchmark databases use.
func BenchmarkNextFailed(b *testing.B) {
	g, err := NewGenerator(Options{Failed: b.N, Seed: 1, Now: testNow, PayloadSize: 2048, ExceptionSize: 4096})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	bytes := 0
	for i := 0; i < b.N; i++ {
		r, ok, err := g.NextFailed()
		if err != nil || !ok {
			b.Fatal(err, ok)
		}
		bytes += len(r.Payload) + len(r.Exception)
	}
	b.SetBytes(int64(bytes / b.N))
}
