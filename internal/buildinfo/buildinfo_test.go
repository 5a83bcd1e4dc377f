package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFrom(t *testing.T) {
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install @v1.2.3: no VCS", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}},
			"txnscope v1.2.3, revision unknown (not built from a checkout), built with go1.26.8"},
		{"go install . in a clean checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261202093000-8bc499a1c2d3"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8bc499a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"}, {Key: "vcs.time", Value: "2026-12-02T09:30:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"txnscope v0.0.0-20261202093000-8bc499a1c2d3, revision 8bc499a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7 (2026-12-02T09:30:00Z), built with go1.26.8"},
		{"a modified checkout", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261202093000-8bc499a1c2d3+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "8bc499a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7"}, {Key: "vcs.time", Value: "2026-12-02T09:30:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"txnscope v0.0.0-20261202093000-8bc499a1c2d3, revision 8bc499a1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7 (2026-12-02T09:30:00Z), dirty: uncommitted changes, built with go1.26.8"},
		{"go build -buildvcs=false", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"txnscope devel, revision unknown (not built from a checkout), built with go1.26.8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := from(&c.bi).String(); got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
