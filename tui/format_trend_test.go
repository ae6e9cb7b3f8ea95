package tui

import (
	"testing"

	"github.com/jobtriage/jobtriage/triage"
)

func TestSparkline(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{[]int{0, 0, 0, 0}, "▁▁▁▁"},
		{[]int{0, 1, 2, 4, 7}, "▁▂▃▅█"},
		{[]int{1, 1000}, "▂█"}, // one failure never reads as none
		{[]int{5, 5}, "██"},
		{nil, ""},
	} {
		if got := Sparkline(c.in); got != c.want {
			t.Errorf("Sparkline(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestChange(t *testing.T) {
	for n, want := range map[int]string{0: "0", 3: "+3", -3: "-3", 9999: "+9999", 10000: "+10k", -123456: "-123k",
		999_999: "+999k", 1_000_000: "+1M", -999_999_999: "-999M", 2_000_000_000: "+2G"} {
		if got := Change(n); got != want {
			t.Errorf("Change(%d) = %q, want %q", n, got, want)
		}
		if len([]rune(Change(n))) > 5 {
			t.Errorf("Change(%d) is wider than the trend column leaves", n)
		}
	}
	// The trend column holds any sparkline and a change of up to five cells.
	if w := len([]rune(trendText(triage.Signature{Spark: make([]int, triage.SparkBuckets), Recent: 99999}))); w > trendWidth {
		t.Errorf("trend text %d cells, column %d", w, trendWidth)
	}
}
