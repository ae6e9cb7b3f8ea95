package triage

import (
	"testing"
	"time"
)

func TestParseFailedAt(t *testing.T) {
	berlin := time.FixedZone("Berlin", 3600)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{" 2024-03-05 10:11:12 ", time.Date(2024, 3, 5, 10, 11, 12, 0, berlin)},
		{"2024-03-05 10:11:12.25", time.Date(2024, 3, 5, 10, 11, 12, 25e7, berlin)},
		{"2024-03-05T10:11:12", time.Date(2024, 3, 5, 10, 11, 12, 0, berlin)},
		{"2024-03-05T10:11:12.5Z", time.Date(2024, 3, 5, 10, 11, 12, 5e8, time.UTC)},
		{"2024-03-05 10:11:12+02", time.Date(2024, 3, 5, 10, 11, 12, 0, time.FixedZone("", 7200))},
		{"2024-03-05 10:11:12.1-05:30", time.Date(2024, 3, 5, 10, 11, 12, 1e8, time.FixedZone("", -19800))},
		{"2024-03-05 10:11:12+01:02:03", time.Date(2024, 3, 5, 10, 11, 12, 0, time.FixedZone("", 3723))},
		{"2024-03-05", time.Date(2024, 3, 5, 0, 0, 0, 0, berlin)},
	} {
		got, ok := ParseFailedAt(c.in, berlin)
		_, off := got.Zone()
		_, wantOff := c.want.Zone()
		if !ok || !got.Equal(c.want) || off != wantOff {
			t.Errorf("ParseFailedAt(%q) = %v, %v; want %v", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{"", "garbage", "1700000000", "2024-13-01 00:00:00", "2024-03-05 10:11"} {
		if got, ok := ParseFailedAt(in, berlin); ok {
			t.Errorf("ParseFailedAt(%q) = %v, want not ok", in, got)
		}
	}
}
