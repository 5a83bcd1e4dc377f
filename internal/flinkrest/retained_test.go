package flinkrest

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

func metadata(n int64, cs ...model.Committable) []byte { return testutil.FlinkMetadata(n, cs...) }

type tree struct {
	t   *testing.T
	dir string
}

func newTree(t *testing.T) tree { return tree{t, t.TempDir()} }

func (tr tree) file(path string, data []byte) {
	p := filepath.Join(tr.dir, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tr.t.Fatal(err)
	}
}

func (tr tree) mkdir(path string) {
	if err := os.MkdirAll(filepath.Join(tr.dir, path), 0o755); err != nil {
		tr.t.Fatal(err)
	}
}

const jobA, jobB = "83d3c711c8fe7c52004be21235990872", "0f3e8a1c9b2d4e5f60718293a4b5c6d7"

// cm is the committable of id, pre-committed for the checkpoint its name
// counts (as in every checkpoint these tests write).
func cm(id string, pid int64, epoch int16) model.Committable {
	n, _ := strconv.ParseInt(id[strings.LastIndexByte(id, '-')+1:], 10, 64)
	return model.Committable{ID: id, ProducerID: pid, Epoch: epoch, Checkpoint: n}
}

// Flink's layout (DIR/<job id>/chk-N/_metadata, or DIR/chk-N when given the
// job's own directory): a chk-N holding Flink's _metadata is a completed
// checkpoint, and its committables of the prefix are read out of it.
func TestReadRetained(t *testing.T) {
	tr := newTree(t)
	tr.file(jobA+"/chk-3/_metadata", metadata(3, cm("p-0-3", 11, 0), cm("p-1-3", 12, 0), cm("other-0-3", 13, 0)))
	tr.mkdir(jobA + "/chk-4") // in progress, or failed: no _metadata yet
	tr.mkdir(jobA + "/shared")
	tr.mkdir(jobA + "/taskowned")
	tr.file(jobA+"/shared/chk-9/_metadata", metadata(9)) // not a checkpoint of the job: too deep
	tr.mkdir("savepoints")                               // no chk-N: not a job's directory
	tr.file("README", []byte("x"))
	r := ReadRetained(tr.dir, "p")
	if r.Err != "" || len(r.Problems) != 0 || len(r.Jobs) != 1 {
		t.Fatalf("%+v, want one job", r)
	}
	j := r.Jobs[0]
	want := []model.RetainedCheckpoint{{N: 3, Committables: []model.Committable{cm("p-0-3", 11, 0), cm("p-1-3", 12, 0)}}}
	if j.Dir != filepath.Join(tr.dir, jobA) || j.JobID != jobA || len(j.Problems) != 0 || !slices.EqualFunc(j.Checkpoints, want, sameCheckpoint) {
		t.Errorf("%+v, want %s's chk-3 with p's two committables", j, jobA)
	}

	// The job's own directory, given as DIR.
	r = ReadRetained(filepath.Join(tr.dir, jobA), "p")
	if len(r.Jobs) != 1 || r.Jobs[0].Dir != filepath.Join(tr.dir, jobA) || r.Jobs[0].JobID != "" || len(r.Jobs[0].Checkpoints) != 1 {
		t.Errorf("the job's own directory: %+v", r)
	}

	// A second job beside it is a second job, never merged into the first.
	tr.file(jobB+"/chk-99/_metadata", metadata(99, cm("p-0-99", 21, 0)))
	r = ReadRetained(tr.dir, "p")
	if len(r.Jobs) != 2 || r.Jobs[0].JobID != jobB || r.Jobs[1].JobID != jobA {
		t.Errorf("two jobs: %+v", r)
	}

	if r := ReadRetained(filepath.Join(tr.dir, "missing"), "p"); r.Err == "" {
		t.Errorf("a missing directory read as %+v", r)
	}
}

func sameCheckpoint(a, b model.RetainedCheckpoint) bool {
	return a.N == b.N && slices.Equal(a.Committables, b.Committables)
}

// The committables of real Flink 1.20 and 2.2 checkpoints (testdata/metadata):
// each subtask's pre-committed transaction, with its producer id and epoch;
// the 2.2 writer's own state, which names the ids too, is not taken for
// committables.
func TestCommittablesOfRealCheckpoints(t *testing.T) {
	for _, c := range []struct {
		version, prefix string
		want            []model.Committable
	}{
		{"1.20", "pfx1.20", []model.Committable{cm("pfx1.20-0-9", 17, 0), cm("pfx1.20-1-9", 16, 0)}},
		{"2.2", "pfx2.2", []model.Committable{cm("pfx2.2-0-9", 37, 0), cm("pfx2.2-1-9", 36, 0)}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "metadata", c.version, "_metadata"))
		if err != nil {
			t.Fatal(err)
		}
		if why := header(data, 9); why != "" {
			t.Errorf("Flink %s: the header %s", c.version, why)
		}
		tr := newTree(t)
		tr.file(jobA+"/chk-9/_metadata", data)
		if r := ReadRetained(tr.dir, c.prefix); len(r.Jobs) != 1 || !slices.EqualFunc(r.Jobs[0].Checkpoints, []model.RetainedCheckpoint{{N: 9, Committables: c.want}}, sameCheckpoint) {
			t.Errorf("Flink %s: %+v", c.version, r)
		}
		if r := ReadRetained(tr.dir, "pfx"); len(r.Jobs) != 1 || len(r.Jobs[0].Checkpoints) != 1 || len(r.Jobs[0].Checkpoints[0].Committables) != 0 {
			t.Errorf("Flink %s: prefix pfx found %+v: a prefix is the whole of it", c.version, r)
		}
	}
}

// Every entry that cannot be read or understood is named, never taken for
// "no checkpoint there": a checkpoint the verdict cannot see may hold the
// transaction.
func TestReadRetainedNamesWhatItCannotRead(t *testing.T) {
	good := metadata(7, cm("p-0-7", 1, 0))
	for _, c := range []struct {
		name  string
		setup func(tr tree, job string)
		want  string
	}{
		{"symlinked chk", func(tr tree, job string) {
			elsewhere := newTree(t)
			elsewhere.file("chk-7/_metadata", good)
			if err := os.Symlink(filepath.Join(elsewhere.dir, "chk-7"), filepath.Join(tr.dir, job, "chk-8")); err != nil {
				t.Fatal(err)
			}
		}, `"chk-8" is a symbolic link (not followed)`},
		{"_metadata a directory", func(tr tree, job string) { tr.mkdir(job + "/chk-8/_metadata") }, `"chk-8" holds a _metadata that is a directory, not Flink's file`},
		{"_metadata a FIFO", func(tr tree, job string) {
			tr.mkdir(job + "/chk-8")
			if err := syscall.Mkfifo(filepath.Join(tr.dir, job, "chk-8", "_metadata"), 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, `"chk-8" holds a _metadata that is a named pipe (FIFO)`},
		{"_metadata empty", func(tr tree, job string) { tr.file(job+"/chk-8/_metadata", nil) }, `"chk-8" holds an empty _metadata`},
		{"_metadata a symlink", func(tr tree, job string) {
			tr.mkdir(job + "/chk-8")
			if err := os.Symlink(filepath.Join(tr.dir, job, "chk-7", "_metadata"), filepath.Join(tr.dir, job, "chk-8", "_metadata")); err != nil {
				t.Fatal(err)
			}
		}, `"chk-8" holds a _metadata that is a symbolic link`},
		{"not Flink's", func(tr tree, job string) {
			tr.file(job+"/chk-8/_metadata", []byte("PK\x03\x04 a zip, not a checkpoint"))
		}, `does not start with Flink's magic number`},
		{"a version not read", func(tr tree, job string) {
			m := metadata(8)
			binary.BigEndian.PutUint32(m[4:], 9)
			tr.file(job+"/chk-8/_metadata", m)
		}, `is of metadata version 9, which txnscope does not read`},
		{"another checkpoint's", func(tr tree, job string) { tr.file(job+"/chk-8/_metadata", metadata(80)) }, `"chk-8" holds a _metadata that is checkpoint 80's, not 8's`},
		{"a file named chk-8", func(tr tree, job string) { tr.file(job+"/chk-8", good) }, `"chk-8" is not a directory`},
		{"leading zeros", func(tr tree, job string) { tr.file(job+"/chk-08/_metadata", metadata(8)) }, `"chk-08" is not a checkpoint's name`},
		{"a number past int64", func(tr tree, job string) { tr.file(job+"/chk-99999999999999999999/_metadata", metadata(8)) }, `"chk-99999999999999999999" is not a checkpoint's name`},
		{"not a number", func(tr tree, job string) { tr.file(job+"/chk-x/_metadata", metadata(8)) }, `"chk-x" is not a checkpoint's name (chk-N)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTree(t)
			tr.file(jobA+"/chk-7/_metadata", good)
			c.setup(tr, jobA)
			r := ReadRetained(tr.dir, "p")
			if len(r.Jobs) != 1 || !slices.ContainsFunc(r.Jobs[0].Problems, func(p string) bool { return strings.Contains(p, c.want) }) {
				t.Errorf("%+v, want a problem saying %q", r, c.want)
			}
			if len(r.Jobs) == 1 && (len(r.Jobs[0].Checkpoints) != 1 || r.Jobs[0].Checkpoints[0].N != 7) {
				t.Errorf("chk-7 is still read: %+v", r.Jobs[0].Checkpoints)
			}
		})
	}
}

// More entries than any checkpoint directory holds: not read, and said so,
// never cut short in silence.
func TestReadRetainedTooManyEntries(t *testing.T) {
	defer func(n int) { maxEntries = n }(maxEntries)
	maxEntries = 50
	tr := newTree(t)
	for i := range 60 {
		tr.mkdir(jobA + "/chk-" + strconv.Itoa(i+1))
	}
	tr.file(jobA+"/chk-61/_metadata", metadata(61, cm("p-0-61", 1, 0)))
	r := ReadRetained(tr.dir, "p")
	if len(r.Jobs) != 0 || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "holds more than 50 entries: not read") {
		t.Errorf("%+v, want the job's directory named as not read", r)
	}
	r = ReadRetained(filepath.Join(tr.dir, jobA), "p")
	if r.Err == "" || !strings.Contains(r.Err, "more than 50 entries") {
		t.Errorf("%+v, want the directory refused", r)
	}
}

// A chk-N the reader may not enter (mode 000, read by a user who does not
// own it) is named, not taken for a checkpoint that never completed. As
// root every mode can be read, so the test runs itself again as nobody.
func TestReadRetainedUnreadable(t *testing.T) {
	if dir := os.Getenv("TXNSCOPE_UNREADABLE_DIR"); dir != "" {
		r := ReadRetained(dir, "p")
		if len(r.Jobs) != 1 || !slices.ContainsFunc(r.Jobs[0].Problems, func(p string) bool { return strings.Contains(p, `"chk-8" cannot be read: permission denied`) }) {
			t.Errorf("%+v, want chk-8 named as unreadable", r)
		}
		return
	}
	tr := newTree(t)
	tr.file(jobA+"/chk-7/_metadata", metadata(7, cm("p-0-7", 1, 0)))
	tr.file(jobA+"/chk-8/_metadata", metadata(8, cm("p-0-8", 1, 0)))
	if err := os.Chmod(filepath.Join(tr.dir, jobA, "chk-8"), 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(filepath.Join(tr.dir, jobA, "chk-8"), 0o755)
	if os.Geteuid() != 0 {
		os.Setenv("TXNSCOPE_UNREADABLE_DIR", tr.dir)
		defer os.Unsetenv("TXNSCOPE_UNREADABLE_DIR")
		TestReadRetainedUnreadable(t)
		return
	}
	for p := tr.dir; p != "/"; p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The test binary, where nobody may run it.
	bin := filepath.Join(tr.dir, "flinkrest.test")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestReadRetainedUnreadable$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TXNSCOPE_UNREADABLE_DIR="+tr.dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("as nobody: %v\n%s", err, out)
	}
}

// What one read of a checkpoint directory costs, every refresh in the TUI:
// a real Flink 2.2 job's directory (one retained checkpoint of 3.7 KB), and
// a job whose _metadata is 16 MiB (large keyed state listed in it).
func BenchmarkReadRetained(b *testing.B) {
	real, err := os.ReadFile(filepath.Join("testdata", "metadata", "2.2", "_metadata"))
	if err != nil {
		b.Fatal(err)
	}
	big := append(metadata(9, cm("pfx2.2-0-9", 37, 0)), make([]byte, 16<<20)...)
	for _, c := range []struct {
		name string
		data []byte
	}{{"flink-2.2", real}, {"16MiB", big}} {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			p := filepath.Join(dir, jobA, "chk-9", "_metadata")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, c.data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if r := ReadRetained(dir, "pfx2.2"); len(r.Jobs) != 1 || len(r.Jobs[0].Checkpoints) != 1 {
					b.Fatalf("%+v", r)
				}
			}
		})
	}
}
