// Package buildinfo says which build of txnscope is running, from what the
// Go toolchain stamped into the binary: the module version (a tag, or a
// pseudo-version made from the commit), the VCS revision and its time, and
// whether the checkout had changes that were not committed.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is one build.
type Info struct {
	// Version is the module version: v1.2.3 from `go install ...@v1.2.3`,
	// a pseudo-version (v0.0.0-20261202093000-8bc499a1c2d3) from a
	// checkout, "devel" when the toolchain stamped none.
	Version string
	// Revision and Time are the commit the binary was built from and its
	// time (RFC 3339), "" when not built in a checkout: `go install
	// ...@latest` builds from the module cache, which has no VCS.
	Revision, Time string
	// Dirty: built from a checkout with uncommitted changes.
	Dirty     bool
	GoVersion string
}

// Read is the running binary's build.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: "devel", GoVersion: runtime.Version()}
	}
	return from(bi)
}

func from(bi *debug.BuildInfo) Info {
	in := Info{Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if in.Version == "" || in.Version == "(devel)" {
		in.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Dirty = s.Value == "true"
		}
	}
	// The toolchain marks a pseudo-version of a modified checkout +dirty
	// itself; the dirty mark is said once, apart.
	in.Version = strings.TrimSuffix(in.Version, "+dirty")
	return in
}

// String is --version's line: the version, then the revision, its time
// and "dirty" where known, and the Go version.
func (in Info) String() string {
	parts := []string{"txnscope " + in.Version}
	if in.Revision != "" {
		rev := "revision " + in.Revision
		if in.Time != "" {
			rev += " (" + in.Time + ")"
		}
		parts = append(parts, rev)
	} else {
		parts = append(parts, "revision unknown (not built from a checkout)")
	}
	if in.Dirty {
		parts = append(parts, "dirty: uncommitted changes")
	}
	parts = append(parts, "built with "+in.GoVersion)
	return strings.Join(parts, ", ")
}

// Short is the revision's first 12 characters, "" when unknown.
func (in Info) Short() string {
	return in.Revision[:min(12, len(in.Revision))]
}
