package flinkrest

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/inputfile"
	"github.com/txnscope/txnscope/model"
)

var chkDir = regexp.MustCompile(`^chk-(\d+)$`)

// Bounds on what one directory may make txnscope read: Flink keeps one
// completed checkpoint per job by default (state.checkpoints.num-retained),
// so anything near them is not a checkpoint directory as Flink leaves it.
// Past one, the directory is not read on (and says so), never cut short in
// silence.
var maxEntries = 100000

const (
	// maxMetadata bounds one _metadata; maxDirRead all read in one reading.
	maxMetadata = 64 << 20
	maxDirRead  = 256 << 20
	// maxCommittables bounds what one checkpoint may hold of a prefix.
	maxCommittables = 100000
)

// metadataMagic starts every _metadata Flink writes (Checkpoints.HEADER_MAGIC_NUMBER).
const metadataMagic = 0x4960672D

// metadataVersions are the _metadata versions txnscope reads: seen written
// by Flink 1.20 (4) and 2.2 (6); 3 and 5 are the versions between, whose
// committables the same connectors serialize alike.
var metadataVersions = []int32{3, 4, 5, 6}

// ReadRetained reads dir, the checkpoint directory of prefix's job as
// --flink-checkpoints names it: Flink's checkpoint root (dir/<job id>/chk-N)
// or one job's (dir/chk-N). For each job's directory it lists the
// completed checkpoints (a chk-N holding Flink's _metadata) and the
// committables of prefix each holds, and names every entry it cannot read
// or understand. It reads no file's time: a copy resets them.
func ReadRetained(dir, prefix string) model.RetainedDir {
	out := model.RetainedDir{Dir: dir}
	rd := &reading{prefix: prefix, budget: maxDirRead}
	top, err := listDir(dir)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	var flat []fs.DirEntry
	for _, e := range top {
		name := e.Name()
		switch {
		case chkDir.MatchString(name) || strings.HasPrefix(name, "chk-"):
			flat = append(flat, e)
		case name == "shared" || name == "taskowned":
			// Flink's own beside the chk-N of one job.
		case e.Type()&fs.ModeSymlink != 0:
			out.Problems = append(out.Problems, fmt.Sprintf("%s is a symbolic link (not followed)", escape.Quote(name)))
		case e.IsDir():
			sub := filepath.Join(dir, name)
			entries, err := listDir(sub)
			if err != nil {
				out.Problems = append(out.Problems, fmt.Sprintf("%s: %s", escape.Quote(name), err))
				continue
			}
			if j, ok := rd.job(sub, name, entries); ok {
				out.Jobs = append(out.Jobs, j)
			}
		}
	}
	if len(flat) > 0 {
		j, _ := rd.job(dir, "", flat)
		out.Jobs = append(out.Jobs, j)
	}
	slices.SortFunc(out.Jobs, func(a, b model.RetainedJob) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

// reading is one ReadRetained: what it may still read.
type reading struct {
	prefix string
	budget int64
}

// listDir lists dir, refusing one with more than maxEntries entries without
// holding them all.
func listDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, reason(err)
	}
	defer f.Close()
	var out []fs.DirEntry
	for {
		batch, err := f.ReadDir(1024)
		out = append(out, batch...)
		if len(out) > maxEntries {
			return nil, fmt.Errorf("holds more than %d entries: not read", maxEntries)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(batch) == 0) {
			return out, nil
		}
		if err != nil {
			return nil, reason(err)
		}
	}
}

// job reads the chk-N of one job's directory; ok is false when it holds
// none (a directory of something else).
func (rd *reading) job(dir, name string, entries []fs.DirEntry) (j model.RetainedJob, ok bool) {
	j.Dir = dir
	if validID(name) {
		j.JobID = name
	}
	seen := map[int64]string{}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "chk-") {
			continue
		}
		ok = true
		n, cp, problem := rd.checkpoint(dir, e)
		switch {
		case problem != "":
			j.Problems = append(j.Problems, problem)
		case cp == nil:
			// In progress, or failed: Flink writes _metadata last.
		case seen[n] != "":
			j.Problems = append(j.Problems, fmt.Sprintf("%s and %s are both checkpoint %d", escape.Quote(seen[n]), escape.Quote(e.Name()), n))
		default:
			seen[n] = e.Name()
			j.Checkpoints = append(j.Checkpoints, *cp)
		}
	}
	slices.SortFunc(j.Checkpoints, func(a, b model.RetainedCheckpoint) int { return cmp.Compare(a.N, b.N) })
	return j, ok
}

// checkpoint reads one chk-N entry of dir: the completed checkpoint it
// holds, nil when it holds none yet (no _metadata), or why it cannot be
// read or understood.
func (rd *reading) checkpoint(dir string, e fs.DirEntry) (n int64, cp *model.RetainedCheckpoint, problem string) {
	name := e.Name()
	bad := func(format string, args ...any) (int64, *model.RetainedCheckpoint, string) {
		return 0, nil, escape.Quote(name) + " " + fmt.Sprintf(format, args...)
	}
	m := chkDir.FindStringSubmatch(name)
	if m == nil {
		return bad("is not a checkpoint's name (chk-N)")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != m[1] {
		return bad("is not a checkpoint's name: Flink writes chk-N, N a number without leading zeros")
	}
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		return bad("is a symbolic link (not followed): Flink writes a directory")
	case !e.IsDir():
		return bad("is not a directory")
	}
	path := filepath.Join(dir, name, "_metadata")
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return n, nil, ""
	case err != nil:
		return bad("cannot be read: %s", reason(err))
	case fi.Mode()&fs.ModeSymlink != 0:
		return bad("holds a _metadata that is a symbolic link (not followed)")
	case !fi.Mode().IsRegular():
		return bad("holds a _metadata that is %s, not Flink's file", inputfile.Kind(fi.Mode()))
	case fi.Size() == 0:
		return bad("holds an empty _metadata: Flink's starts with its magic number")
	case fi.Size() > rd.budget:
		return bad("was not read: the checkpoints read passed %d MiB", maxDirRead>>20)
	}
	data, err := inputfile.ReadUpTo(path, min(maxMetadata, rd.budget))
	if err != nil {
		return bad("holds a _metadata that cannot be read: %s", err)
	}
	rd.budget -= int64(len(data))
	if why := header(data, n); why != "" {
		return bad("holds a _metadata that %s", why)
	}
	_, commits, err := checkpointCommits(data, rd.stateFile(filepath.Join(dir, name)))
	if err != nil {
		return bad("holds a _metadata that %s", err)
	}
	var cs []model.Committable
	for _, c := range commits {
		if flinkIDOf(c.ID, rd.prefix) {
			cs = append(cs, c.Committable)
		}
	}
	return n, &model.RetainedCheckpoint{N: n, Committables: cs}, ""
}

// stateFile reads the file a checkpoint's _metadata names for state too
// large to hold inline: Flink writes it into the checkpoint's own directory
// (chk), or, as an absolute path, into the job's (shared state). Nothing
// outside the job's directory is read, and no more than the budget.
func (rd *reading) stateFile(chk string) func(streamHandle) ([]byte, error) {
	job := filepath.Dir(chk)
	return func(h streamHandle) ([]byte, error) {
		path := filepath.Join(chk, filepath.FromSlash(h.Path))
		if !h.Relative {
			path = filepath.FromSlash(strings.TrimPrefix(h.Path, "file:"))
		}
		if rel, err := filepath.Rel(job, path); err != nil || !filepath.IsLocal(rel) {
			return nil, fmt.Errorf("%s is outside the job's checkpoint directory (not read)", escape.Quote(h.Path))
		}
		fi, err := os.Lstat(path)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s cannot be read: %s", escape.Quote(h.Path), reason(err))
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("%s is %s, not a state file", escape.Quote(h.Path), inputfile.Kind(fi.Mode()))
		case fi.Size() != h.Size:
			return nil, fmt.Errorf("%s holds %d bytes, the _metadata says %d", escape.Quote(h.Path), fi.Size(), h.Size)
		case fi.Size() > min(maxMetadata, rd.budget):
			return nil, fmt.Errorf("%s was not read: the checkpoints read passed %d MiB", escape.Quote(h.Path), maxDirRead>>20)
		}
		data, err := inputfile.ReadUpTo(path, min(maxMetadata, rd.budget))
		if err != nil {
			return nil, fmt.Errorf("%s cannot be read: %s", escape.Quote(h.Path), err)
		}
		rd.budget -= int64(len(data))
		return data, nil
	}
}

// header checks that data starts as Flink's _metadata of checkpoint n does:
// its magic number, a version txnscope reads, and n itself.
func header(data []byte, n int64) string {
	if len(data) < 16 {
		return "is too short to be Flink's"
	}
	if binary.BigEndian.Uint32(data) != metadataMagic {
		return fmt.Sprintf("does not start with Flink's magic number (%08x, not %08x)", binary.BigEndian.Uint32(data), uint32(metadataMagic))
	}
	if v := int32(binary.BigEndian.Uint32(data[4:])); !slices.Contains(metadataVersions, v) {
		return fmt.Sprintf("is of metadata version %d, which txnscope does not read (it reads 3 to 6: Flink 1.20 writes 4, 2.2 writes 6)", v)
	}
	if id := int64(binary.BigEndian.Uint64(data[8:])); id != n {
		return fmt.Sprintf("is checkpoint %d's, not %d's", id, n)
	}
	return ""
}

// reason drops the operation and path os puts in front of its errors.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
