//go:build unix

package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestDockerfile checks the image recipe without a Docker daemon (CI has
// none): the stages and the final image's shape, then the binary the source
// stage's exact build command makes (the one every test here runs), which
// must be static (no ELF interpreter: it runs on scratch) and work with an
// empty environment, as in the image.
func TestDockerfile(t *testing.T) {
	text, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(text)
	var froms []string
	for _, l := range strings.Split(df, "\n") {
		if strings.HasPrefix(l, "FROM ") {
			froms = append(froms, l)
		}
	}
	if len(froms) < 2 || froms[len(froms)-1] != "FROM scratch" {
		t.Errorf("want a multi-stage build ending on scratch, got %q", froms)
	}
	final := df[strings.LastIndex(df, "\nFROM scratch\n"):]
	for _, want := range []string{"ca-certificates.crt", "USER 65532:65532", `ENTRYPOINT ["/usr/bin/jobtriage"]`, "COPY --from=binary /out/jobtriage /usr/bin/jobtriage"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Contains(final, "USER root") || strings.Contains(final, "USER 0") {
		t.Error("the final image runs as root")
	}
	// The prebuilt stage takes what .goreleaser.yaml's dockers_v2 provides.
	if !strings.Contains(df, "COPY ${TARGETPLATFORM}/jobtriage") {
		t.Error("the prebuilt stage does not take goreleaser's $TARGETPLATFORM/jobtriage")
	}
	gr, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gr), "BINARY_FROM: prebuilt") || !strings.Contains(string(gr), "dockerfile: Dockerfile") {
		t.Error(".goreleaser.yaml does not build the image from this Dockerfile's prebuilt stage")
	}

	if dockerBuildLine.FindString(df) == "" {
		t.Fatal("no CGO_ENABLED=0 go build in the source stage")
	}
	bin := binary(t) // built by exactly that command
	if runtime.GOOS == "linux" {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s: the binary has an ELF interpreter: it is not static and would not start on scratch", built.command)
			}
		}
	}
	db := demo(t)
	run := exec.Command(bin, "failed", "--group", "--dsn", "sqlite:"+db)
	run.Env = []string{} // scratch: no PATH, no HOME, no USER
	run.Dir = t.TempDir()
	if b, err := run.CombinedOutput(); err != nil || !strings.Contains(string(b), "0f494f9f16") {
		t.Errorf("the static binary with an empty environment: %v\n%s", err, b)
	}
}
