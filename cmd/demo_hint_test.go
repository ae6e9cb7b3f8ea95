package cmd

import "testing"

func TestDemoHintNamesHowJobtriageWasRun(t *testing.T) {
	for exe, want := range map[string]string{
		"/tmp/go-build2877/b001/exe/jobtriage": "go run .",
		"/usr/local/bin/jobtriage":             "jobtriage",
	} {
		if got := invocationOf(func() (string, error) { return exe, nil }); got != want {
			t.Errorf("invocationOf(%s) = %q, want %q", exe, got, want)
		}
	}
	if got := invocationOf(nil); got != "jobtriage" {
		t.Errorf("invocationOf(nil) = %q", got)
	}
}
