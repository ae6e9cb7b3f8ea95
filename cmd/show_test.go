package cmd

import "testing"

func TestNewCmdShow(t *testing.T) {
	p := parseWith(t, NewCmdShow, "11111111-1111-4111-8111-111111111111")
	if p.code != ExitOK || p.opts.ID != "11111111-1111-4111-8111-111111111111" || p.opts.JSON || p.opts.Frames != 12 {
		t.Fatalf("defaults: exit %d %s %+v", p.code, p.err, p.opts)
	}
	p = parseWith(t, NewCmdShow, "1042", "--json", "--frames", "0")
	if p.code != ExitOK || p.opts.ID != "1042" || !p.opts.JSON || p.opts.Frames != 0 {
		t.Errorf("flags: exit %d %s %+v", p.code, p.err, p.opts)
	}
	usageCases(t, NewCmdShow, map[string][]string{
		"exactly one job id, got 0": {},
		"exactly one job id, got 2": {"1", "2"},
		"is not a valid row id":     {"0"},
		"invalid argument":          {"1", "--frames", "x"},
	})
}
