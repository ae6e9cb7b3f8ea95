package buildinfo

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFrom(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-30T10:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	tests := []struct {
		name  string
		stamp Stamp
		bi    *debug.BuildInfo
		want  Info
	}{
		{"release stamp wins", Stamp{Version: "v1.2.0", Commit: "def456", Date: "2026-12-01T00:00:00Z"}, vcs,
			Info{Version: "1.2.0", Commit: "def456", Date: "2026-12-01T00:00:00Z", GoVersion: "go1.26.8", Platform: "linux/amd64"}},
		{"clone build: vcs settings", Stamp{}, vcs,
			Info{Version: DevVersion, Commit: "abc123", Date: "2026-11-30T10:00:00Z", Modified: true, GoVersion: "go1.26.8", Platform: "linux/amd64"}},
		{"go install module@version", Stamp{}, &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}},
			Info{Version: "1.3.0", GoVersion: "go1.26.8", Platform: "linux/amd64"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, From(tt.stamp, tt.bi, "linux/amd64")); d != "" {
				t.Errorf("From (-want +got):\n%s", d)
			}
		})
	}
}

func TestFromWithoutBuildInfo(t *testing.T) {
	got := From(Stamp{}, nil, "linux/arm64")
	if got.Version != DevVersion || got.Commit != "" || got.GoVersion == "" {
		t.Errorf("From(no build info) = %+v, want version %q, no commit, the runtime's Go version", got, DevVersion)
	}
}

func TestString(t *testing.T) {
	in := Info{Version: "1.2.0", Commit: "abc", Modified: true, GoVersion: "go1.26.8", Platform: "darwin/arm64"}
	want := "jobtriage 1.2.0\ncommit: abc (modified)\nbuilt:  unknown\ngo:     go1.26.8 darwin/arm64\n"
	if got := in.String(); got != want {
		t.Errorf("String() =\n%s\nwant\n%s", got, want)
	}
}
