package triage

import (
	"errors"
	"testing"
)

// A cursor round-trips through its text for every id, 0 and negative ids
// included; only the zero Cursor (start from the newest) prints as "".
func TestCursorRoundTrip(t *testing.T) {
	if s := (Cursor{}).String(); s != "" {
		t.Errorf("the zero cursor prints %q", s)
	}
	for _, id := range []int64{42, 1, 0, -1, -9000000000} {
		s := CursorBefore(id).String()
		if s == "" {
			t.Fatalf("a cursor below %d prints nothing", id)
		}
		c, err := ParseCursor(s)
		if err != nil || !c.Bounded() || c.BeforeID != id {
			t.Errorf("cursor below %d: parsed %+v, %v", id, c, err)
		}
	}
	// Below 0 is said to a store as MaxID -1, never widened.
	at0 := CursorBefore(0)
	for _, tc := range []struct{ max, want int64 }{{0, -1}, {100, -1}, {-1, -1}, {-5, -5}} {
		if got := at0.below(Filter{MaxID: tc.max}).MaxID; got != tc.want {
			t.Errorf("below 0 with MaxID %d: %d, want %d", tc.max, got, tc.want)
		}
	}
	if got := CursorBefore(7).below(Filter{}).MaxID; got != 0 {
		t.Errorf("below 7 set MaxID %d", got)
	}
}

// FuzzParseCursor: --cursor is typed by people. Whatever it is, ParseCursor
// returns a cursor or ErrInvalidCursor, never panics, and a cursor it
// accepts prints back to text that parses to the same bound.
func FuzzParseCursor(f *testing.F) {
	for _, id := range []int64{42, 1, 0, -1, -9000000000} {
		f.Add(CursorBefore(id).String())
	}
	f.Add("")
	f.Add("bm9wZQ")
	f.Add("djE6")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidCursor) {
				t.Fatalf("ParseCursor(%q): %v is not ErrInvalidCursor", s, err)
			}
			return
		}
		back, err := ParseCursor(c.String())
		if err != nil || back.Bounded() != c.Bounded() || back.BeforeID != c.BeforeID {
			t.Fatalf("ParseCursor(%q) = %+v; printed %q, parsed back %+v, %v", s, c, c.String(), back, err)
		}
	})
}
