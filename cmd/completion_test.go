package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobtriage/jobtriage/triage"
)

func TestCompletionIsListedInHelp(t *testing.T) {
	h := newHarness(t, false)
	if code := h.run("--help"); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(h.out.String(), "\n  completion ") {
		t.Errorf("root help does not list completion:\n%s", h.out)
	}
	if code := h.run("completion", "bash"); code != ExitOK || !strings.Contains(h.out.String(), "__start_jobtriage") {
		t.Errorf("completion bash: exit %d\n%.200s", code, h.out)
	}
}

// complete runs cobra's hidden __complete command as a shell would and
// returns the candidates (value and description), without the directive.
func complete(t *testing.T, h *harness, args ...string) []string {
	t.Helper()
	if code := h.run(append([]string{cobra.ShellCompRequestCmd}, args...)...); code != ExitOK {
		t.Fatalf("__complete %v: exit %d: %s", args, code, h.errOut)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(h.out.String()), "\n") {
		if !strings.HasPrefix(l, ":") {
			out = append(out, l)
		}
	}
	return out
}

func TestDynamicCompletionFromTheDatabase(t *testing.T) {
	dsn, _ := seed(t)
	h := newHarness(t, false)
	queues := complete(t, h, "failed", "--dsn", dsn, "--queue", "")
	if len(queues) < 2 || !strings.HasPrefix(queues[0], "default\t") || !strings.Contains(strings.Join(queues, "\n"), "emails\t") {
		t.Errorf("--queue candidates: %q", queues)
	}
	if got := complete(t, h, "retry", "--dsn", dsn, "--queue", "default,em"); len(got) != 1 || !strings.HasPrefix(got[0], "default,emails\t") {
		t.Errorf("--queue default,em: %q, want the list's last name completed", got)
	}
	if got := complete(t, h, "forget", "--dsn", dsn, "--connection", "data"); len(got) != 1 || !strings.HasPrefix(got[0], "database\t") {
		t.Errorf("--connection data: %q", got)
	}
	sigs := complete(t, h, "failed", "--dsn", dsn, "--signature", "")
	if len(sigs) == 0 || len(strings.SplitN(sigs[0], "\t", 2)[0]) != 10 {
		t.Errorf("--signature candidates: %q, want 10-hex ids", sigs)
	}
	ids := complete(t, h, "retry", "--dsn", dsn, "")
	if len(ids) < 2 || !strings.HasPrefix(ids[0], "all\t") || !strings.Contains(strings.Join(ids, "\n"), "11111111-1111-4111-8111-111111111111\t") {
		t.Errorf("retry ids: %q", ids)
	}
	if got := complete(t, h, "show", "--dsn", dsn, "1111"); len(got) != 1 || !strings.HasPrefix(got[0], "11111111-1111-4111-8111-111111111111\t") {
		t.Errorf("show 1111: %q", got)
	}
}

func TestDynamicCompletionIsSilentOnFailure(t *testing.T) {
	h := newHarness(t, false)
	got := complete(t, h, "failed", "--dsn", "sqlite:/nonexistent/x.sqlite", "--queue", "")
	if len(got) != 0 || strings.Contains(h.errOut.String(), "jobtriage:") {
		t.Errorf("candidates %q, stderr %q: want none and no error", got, h.errOut)
	}
}

func TestDynamicCompletionGivesUpAtTheTimeout(t *testing.T) {
	hang := func(ctx context.Context) (triage.Suggestions, error) {
		<-ctx.Done()
		return triage.Suggestions{}, ctx.Err()
	}
	start := time.Now()
	got, dir := completeFrom(hang, "id", false, triage.Suggestion{Value: "all"})(nil, nil, "")
	if took := time.Since(start); took > 2*completionTimeout {
		t.Errorf("took %s, want about %s", took, completionTimeout)
	}
	if len(got) != 1 || got[0] != "all" || dir != cobra.ShellCompDirectiveNoFileComp {
		t.Errorf("got %q %v, want only the fixed candidate", got, dir)
	}
}

func TestCompletionDescriptionIsOneShortLine(t *testing.T) {
	got := completionDescription("a\nb   " + strings.Repeat("x", 100))
	if strings.ContainsAny(got, "\n\t") || len([]rune(got)) != 60 || !strings.HasSuffix(got, "…") {
		t.Errorf("%q", got)
	}
}

func TestCompletionOffersOnlyInertNames(t *testing.T) {
	s := func(context.Context) (triage.Suggestions, error) {
		return triage.Suggestions{Queues: []triage.Suggestion{
			{Value: "evil\x1b]0;pwned\a", Description: "x"}, {Value: "two words"}, {Value: "ok", Description: "msg \x1b[31mred"},
		}}, nil
	}
	got, _ := completeFrom(s, "queue", true)(nil, nil, "")
	if len(got) != 1 || !strings.HasPrefix(got[0], "ok\t") || strings.Contains(got[0], "\x1b") {
		t.Errorf("got %q: want only ok, its description made inert", got)
	}
}
