// Package buildinfo says which jobtriage this is: the version, commit and
// build date the release build stamps in with -ldflags -X, else what the Go
// toolchain recorded in the binary (the module version of `go install
// …@vX.Y.Z`, the vcs.revision and vcs.time of a build from a clone).
//
// The release build (.goreleaser.yaml) sets, for example:
//
//	-X github.com/jobtriage/jobtriage/internal/buildinfo.version=1.2.0
//	-X github.com/jobtriage/jobtriage/internal/buildinfo.commit=<sha>
//	-X github.com/jobtriage/jobtriage/internal/buildinfo.date=<RFC 3339>
package buildinfo

import (
	"cmp"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set by the linker (-ldflags -X) in release builds, which can set nothing
// but package-level variables.
var (
	version string
	commit  string
	date    string
)

// DevVersion is the version of a plain `go build` or `go run` from a clone.
const DevVersion = "dev"

// Info is one binary's identity.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`     // "" when unknown
	Date      string `json:"build_date"` // RFC 3339; "" when unknown
	Modified  bool   `json:"modified"`   // built from a tree with uncommitted changes
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"` // GOOS/GOARCH
}

// Read is this binary's Info.
func Read() Info {
	bi, _ := debug.ReadBuildInfo() // nil when the binary has none
	return From(Stamp{Version: version, Commit: commit, Date: date}, bi, runtime.GOOS+"/"+runtime.GOARCH)
}

// Stamp is what the linker set.
type Stamp struct{ Version, Commit, Date string }

// From combines the linker's stamp with the toolchain's build info (nil when
// the binary has none); a stamped value wins over a recorded one.
func From(s Stamp, bi *debug.BuildInfo, platform string) Info {
	in := Info{Version: strings.TrimPrefix(s.Version, "v"), Commit: s.Commit, Date: s.Date,
		GoVersion: runtime.Version(), Platform: platform}
	if bi != nil {
		if bi.GoVersion != "" {
			in.GoVersion = bi.GoVersion
		}
		if in.Version == "" {
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				in.Version = strings.TrimPrefix(v, "v")
			}
		}
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				in.Commit = cmp.Or(in.Commit, kv.Value)
			case "vcs.time":
				in.Date = cmp.Or(in.Date, kv.Value)
			case "vcs.modified":
				in.Modified = s.Commit == "" && kv.Value == "true"
			}
		}
	}
	in.Version = cmp.Or(in.Version, DevVersion)
	return in
}

// String is the text `jobtriage version` and `--version` print.
func (in Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "jobtriage %s\n", in.Version)
	commit := in.Commit
	if commit == "" {
		commit = "unknown"
	} else if in.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(&b, "commit: %s\n", commit)
	fmt.Fprintf(&b, "built:  %s\n", cmp.Or(in.Date, "unknown"))
	fmt.Fprintf(&b, "go:     %s %s\n", in.GoVersion, in.Platform)
	return b.String()
}
