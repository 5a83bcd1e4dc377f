package flinkrest

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"

	"github.com/txnscope/txnscope/model"
)

var chkDir = regexp.MustCompile(`^chk-(\d+)$`)

// maxRetained bounds what one directory may list.
const maxRetained = 100000

// ReadRetained lists dir's completed checkpoints: every chk-N holding a
// _metadata, at dir/chk-N or dir/<job id>/chk-N (Flink's layout), with
// when the _metadata was written. It never reads a checkpoint's contents.
func ReadRetained(dir string) model.RetainedDir {
	out := model.RetainedDir{Dir: dir}
	top, err := os.ReadDir(dir)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	look := func(parent string, entries []os.DirEntry) {
		for _, e := range entries {
			m := chkDir.FindStringSubmatch(e.Name())
			if m == nil || !e.IsDir() || len(out.Checkpoints) >= maxRetained {
				continue
			}
			n, err := strconv.ParseInt(m[1], 10, 64)
			if err != nil {
				continue
			}
			fi, err := os.Stat(filepath.Join(parent, e.Name(), "_metadata"))
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			out.Checkpoints = append(out.Checkpoints, model.RetainedCheckpoint{N: n, AtMs: fi.ModTime().UnixMilli()})
		}
	}
	look(dir, top)
	for _, e := range top {
		if e.IsDir() && chkDir.FindStringSubmatch(e.Name()) == nil {
			sub := filepath.Join(dir, e.Name())
			if entries, err := os.ReadDir(sub); err == nil {
				look(sub, entries)
			}
		}
	}
	slices.SortFunc(out.Checkpoints, func(a, b model.RetainedCheckpoint) int {
		return cmp.Or(cmp.Compare(a.N, b.N), cmp.Compare(a.AtMs, b.AtMs))
	})
	return out
}
