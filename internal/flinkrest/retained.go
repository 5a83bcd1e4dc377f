package flinkrest

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/escape"
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

// keepNewest is how many completed checkpoints of a job are read, newest
// first: a verdict rests on the newest, and the ones before it only show
// whether the newest is as the job left it. Older ones, however many, are
// listed, never read.
const keepNewest = 3

// ReadRetained reads dir, a local checkpoint directory (ReadLocation).
func ReadRetained(dir, prefix string) model.RetainedDir {
	st, err := ckptstore.Local(dir)
	if err != nil {
		return model.RetainedDir{Dir: dir, Err: err.Error()}
	}
	return ReadLocation(context.Background(), st, prefix)
}

// ReadLocation reads st, the checkpoint location of prefix's job as
// --flink-checkpoints names it: Flink's checkpoint root (<job id>/chk-N) or
// one job's (chk-N). For each job's directory it lists the checkpoints, reads
// the newest completed ones (a chk-N holding Flink's _metadata) and the
// committables of prefix each holds, and names every entry it cannot read
// or understand. It reads no file's time: a copy resets them.
func ReadLocation(ctx context.Context, st ckptstore.Store, prefix string) model.RetainedDir {
	out := model.RetainedDir{Dir: st.Root()}
	rd := &reading{ctx: ctx, st: st, prefix: prefix, budget: maxDirRead}
	top, err := st.List(ctx, "", maxEntries)
	if err != nil {
		out.Err = err.Error()
		return out
	}
	var flat []ckptstore.Entry
	for _, e := range top {
		name := e.Name
		switch {
		case strings.HasPrefix(name, "chk-"):
			flat = append(flat, e)
		case name == "shared" || name == "taskowned":
			// Flink's own beside the chk-N of one job.
		case e.Odd != "":
			if e.Odd == "a symbolic link" {
				out.Problems = append(out.Problems, fmt.Sprintf("%s is a symbolic link (not followed)", escape.Quote(name)))
			}
		case e.Dir:
			entries, err := st.List(ctx, name, maxEntries)
			if err != nil {
				out.Problems = append(out.Problems, fmt.Sprintf("%s: %s", escape.Quote(name), err))
				continue
			}
			if j, ok := rd.job(name, entries); ok {
				out.Jobs = append(out.Jobs, j)
			}
		}
	}
	if len(flat) > 0 {
		j, _ := rd.job("", flat)
		out.Jobs = append(out.Jobs, j)
	}
	slices.SortFunc(out.Jobs, func(a, b model.RetainedJob) int { return strings.Compare(a.Dir, b.Dir) })
	return out
}

// reading is one ReadLocation: where, and what it may still read.
type reading struct {
	ctx    context.Context
	st     ckptstore.Store
	prefix string
	budget int64
}

// job reads the newest completed checkpoints of one job's directory dir
// (a path of the store; name its last element); ok is false when it holds
// no chk-N (a directory of something else).
func (rd *reading) job(dir string, entries []ckptstore.Entry) (j model.RetainedJob, ok bool) {
	j.Dir = rd.st.Show(dir)
	if validID(dir) {
		j.JobID = dir
	}
	type chk struct {
		n int64
		e ckptstore.Entry
	}
	var chks []chk
	for _, e := range entries {
		if !strings.HasPrefix(e.Name, "chk-") {
			continue
		}
		ok = true
		n, problem := chkNumber(e)
		if problem != "" {
			j.Problems = append(j.Problems, problem)
			continue
		}
		chks = append(chks, chk{n, e})
	}
	slices.SortFunc(chks, func(a, b chk) int { return cmp.Compare(b.n, a.n) })
	for _, c := range chks {
		if len(j.Checkpoints) == keepNewest {
			break
		}
		cp, problem := rd.checkpoint(ckptstore.Join(dir, c.e.Name), c.e.Name, c.n)
		switch {
		case problem != "":
			j.Problems = append(j.Problems, problem)
		case cp != nil:
			j.Checkpoints = append(j.Checkpoints, *cp)
		}
		// nil: in progress, or failed: Flink writes _metadata last.
	}
	slices.Reverse(j.Checkpoints)
	return j, ok
}

// chkNumber is the checkpoint a chk-N entry names, or why it is not one.
func chkNumber(e ckptstore.Entry) (int64, string) {
	bad := func(format string, args ...any) (int64, string) {
		return 0, escape.Quote(e.Name) + " " + fmt.Sprintf(format, args...)
	}
	m := chkDir.FindStringSubmatch(e.Name)
	if m == nil {
		return bad("is not a checkpoint's name (chk-N)")
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || strconv.FormatInt(n, 10) != m[1] {
		return bad("is not a checkpoint's name: Flink writes chk-N, N a number without leading zeros")
	}
	switch {
	case e.Odd == "a symbolic link":
		return bad("is a symbolic link (not followed): Flink writes a directory")
	case !e.Dir:
		return bad("is not a directory")
	}
	return n, ""
}

// checkpoint reads checkpoint n, the chk-N at path: the completed
// checkpoint it holds, nil when it holds none yet (no _metadata), or why it
// cannot be read or understood.
func (rd *reading) checkpoint(path, name string, n int64) (*model.RetainedCheckpoint, string) {
	bad := func(format string, args ...any) (*model.RetainedCheckpoint, string) {
		return nil, escape.Quote(name) + " " + fmt.Sprintf(format, args...)
	}
	meta := ckptstore.Join(path, "_metadata")
	fi, err := rd.st.Stat(rd.ctx, meta)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, ""
	case err != nil:
		return bad("cannot be read: %s", err)
	case fi.Odd == "a symbolic link":
		return bad("holds a _metadata that is a symbolic link (not followed)")
	case fi.Dir || fi.Odd != "":
		return bad("holds a _metadata that is %s, not Flink's file", cmp.Or(fi.Odd, "a directory"))
	case fi.Size == 0:
		return bad("holds an empty _metadata: Flink's starts with its magic number")
	case fi.Size > rd.budget:
		return bad("was not read: the checkpoints read passed %d MiB", maxDirRead>>20)
	}
	data, err := rd.st.Read(rd.ctx, meta, min(maxMetadata, rd.budget))
	if err != nil {
		return bad("holds a _metadata that cannot be read: %s", err)
	}
	rd.budget -= int64(len(data))
	if why := header(data, n); why != "" {
		return bad("holds a _metadata that %s", why)
	}
	_, commits, err := checkpointCommits(data, rd.stateFile(path))
	if err != nil {
		return bad("holds a _metadata that %s", err)
	}
	var cs []model.Committable
	for _, c := range commits {
		if rd.prefix == "" || flinkIDOf(c.ID, rd.prefix) {
			cs = append(cs, c.Committable)
		}
	}
	return &model.RetainedCheckpoint{N: n, Committables: cs}, ""
}

// stateFile reads the file a checkpoint's _metadata names for state too
// large to hold inline: Flink writes it into the checkpoint's own directory
// (chk, a relative handle), or, as an absolute path, into the job's (shared
// state). Nothing outside the job's directory is read, and no more than the
// budget.
func (rd *reading) stateFile(chk string) func(streamHandle) ([]byte, error) {
	job := ""
	if i := strings.LastIndexByte(chk, '/'); i >= 0 {
		job = chk[:i]
	}
	return func(h streamHandle) ([]byte, error) {
		var path string
		if h.Relative {
			rel := h.Path
			if strings.HasPrefix(rel, "/") || slices.Contains(strings.Split(rel, "/"), "..") {
				return nil, fmt.Errorf("%s is outside the job's checkpoint directory (not read)", escape.Quote(h.Path))
			}
			path = ckptstore.Join(chk, rel)
		} else {
			p, ok := rd.st.Within(h.Path, job)
			if !ok {
				return nil, fmt.Errorf("%s is outside the job's checkpoint directory (not read)", escape.Quote(h.Path))
			}
			path = p
		}
		fi, err := rd.st.Stat(rd.ctx, path)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s cannot be read: %s", escape.Quote(h.Path), err)
		case fi.Dir || fi.Odd != "":
			return nil, fmt.Errorf("%s is %s, not a state file", escape.Quote(h.Path), cmp.Or(fi.Odd, "a directory"))
		case fi.Size != h.Size:
			return nil, fmt.Errorf("%s holds %d bytes, the _metadata says %d", escape.Quote(h.Path), fi.Size, h.Size)
		case fi.Size > min(maxMetadata, rd.budget):
			return nil, fmt.Errorf("%s was not read: the checkpoints read passed %d MiB", escape.Quote(h.Path), maxDirRead>>20)
		}
		data, err := rd.st.Read(rd.ctx, path, min(maxMetadata, rd.budget))
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
