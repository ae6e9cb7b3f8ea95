package termbg

import (
	"bytes"
	"testing"
	"time"
)

func TestFromOSC11(t *testing.T) {
	for _, c := range []struct {
		reply    string
		dark, ok bool
	}{
		{"\x1b]11;rgb:0000/0000/0000\x1b\\", true, true},
		{"\x1b]11;rgb:ffff/ffff/ffff\a", false, true},
		{"\x1b]11;rgb:fd/f6/e3\x1b\\", false, true}, // solarized light, 2 digits a channel
		{"\x1b]11;rgb:2828/2c2c/3434\x1b\\", true, true},
		{"\x1b]11;rgb:zz/00/00\a", false, false},
		{"", false, false},
	} {
		dark, ok := fromOSC11(c.reply)
		if dark != c.dark || ok != c.ok {
			t.Errorf("fromOSC11(%q) = %v, %v; want %v, %v", c.reply, dark, ok, c.dark, c.ok)
		}
	}
}

func TestDarkWithoutATerminal(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	var out bytes.Buffer
	if Dark(&bytes.Buffer{}, &out, env(map[string]string{"COLORFGBG": "0;15"}), Timeout) {
		t.Error("COLORFGBG 0;15 is a light background")
	}
	if !Dark(&bytes.Buffer{}, &out, env(map[string]string{"COLORFGBG": "15;default;0"}), Timeout) {
		t.Error("COLORFGBG 15;default;0 is a dark background")
	}
	start := time.Now()
	if !Dark(&bytes.Buffer{}, &out, env(nil), Timeout) || out.Len() != 0 || time.Since(start) > Timeout {
		t.Errorf("no terminal: want dark at once and no query, wrote %q", out.String())
	}
}
