package triage

import (
	"math/rand/v2"
	"testing"
)

// keySet against a map: any order of adds.
func TestKeySetAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 200; round++ {
		var k keySet
		want := map[int64]bool{}
		next := int64(rng.IntN(5))
		for i := 0; i < 300; i++ {
			var x int64
			switch rng.IntN(4) {
			case 0: // a sweep pass: anywhere below
				x = rng.Int64N(next + 1)
			default: // ascending, often consecutive
				next += 1 + int64(rng.IntN(2))
				x = next
			}
			if want[x] {
				continue
			}
			k.add(x)
			want[x] = true
		}
		for x := int64(0); x <= next+2; x++ {
			if k.has(x) != want[x] {
				t.Fatalf("round %d: has(%d) = %v, want %v", round, x, k.has(x), want[x])
			}
		}
	}
}
