package triage

import "sort"

// keySet is a set of row keys added mostly in ascending order (a pass walks
// failed_jobs by id), so it keeps runs of consecutive keys as ranges: a
// million skipped rows in a row cost one range. Keys below the last range
// (a sweep pass) go to a map.
type keySet struct {
	runs  [][2]int64 // ascending, disjoint, not adjacent
	extra map[int64]struct{}
}

func (k *keySet) has(x int64) bool {
	i := sort.Search(len(k.runs), func(i int) bool { return k.runs[i][1] >= x })
	if i < len(k.runs) && k.runs[i][0] <= x {
		return true
	}
	_, ok := k.extra[x]
	return ok
}

// add puts x in the set; x must not be in it yet.
func (k *keySet) add(x int64) {
	n := len(k.runs)
	switch {
	case n > 0 && x == k.runs[n-1][1]+1:
		k.runs[n-1][1] = x
	case n == 0 || x > k.runs[n-1][1]:
		k.runs = append(k.runs, [2]int64{x, x})
	default:
		if k.extra == nil {
			k.extra = map[int64]struct{}{}
		}
		k.extra[x] = struct{}{}
	}
}
