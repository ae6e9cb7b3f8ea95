package sqlstore

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestParseIDList(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want []int64
		ok   bool
	}{
		{"", 0, nil, true},
		{"", 1, nil, false},
		{"7", 1, []int64{7}, true},
		{"3,1,-2,9223372036854775807,-9223372036854775808", 5, []int64{3, 1, -2, math.MaxInt64, math.MinInt64}, true},
		{"1,2,", 3, nil, false}, // cut after a comma
		{"1,2,3", 3, []int64{1, 2, 3}, true},
		{"1,2,3x", 3, nil, false}, // not a number
		{"1,,3", 3, nil, false},   // an empty field
		{"1,99999999999999999999", 2, nil, false},
	}
	for _, tt := range tests {
		got, ok := parseIDList([]byte(tt.in), tt.n)
		if ok != tt.ok || (ok && !slices.Equal(got, tt.want)) {
			t.Errorf("parseIDList(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSortUnique(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dense := make([]int64, 0, 5000)
	for id := int64(-100); id < 6000; id++ {
		if r.IntN(5) > 0 {
			dense = append(dense, id)
		}
	}
	sparse := []int64{math.MaxInt64, math.MinInt64, 0, -1, 1, 1 << 40}
	for name, ids := range map[string][]int64{"dense": dense, "sparse": sparse, "one": {5}, "none": nil, "edges": {math.MinInt64, math.MinInt64 + 1}} {
		want := slices.Clone(ids)
		slices.Sort(want)
		got := slices.Clone(ids)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		sortUnique(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: sortUnique gave %v…, want %v…", name, got[:min(len(got), 8)], want[:min(len(want), 8)])
		}
	}
}
