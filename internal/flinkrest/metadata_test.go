package flinkrest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

func realMetadata(t testing.TB, version string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "metadata", version, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Real Flink 1.20 (metadata version 4) and 2.2 (version 6) checkpoints,
// decoded as Flink's serializers wrote them: the checkpoint's id, its
// operators, and in the sink committer's state exactly the committables
// Flink's committer would commit for checkpoint 9.
func TestDecodeRealMetadata(t *testing.T) {
	at := func(c model.Committable, n int64) model.Committable { c.Checkpoint = n; return c }
	for _, c := range []struct {
		version string
		meta    int32
		n       int64
		want    []model.Committable
	}{
		{"1.20", 4, 9, []model.Committable{cm("pfx1.20-0-9", 17, 0), cm("pfx1.20-1-9", 16, 0)}},
		{"2.2", 6, 9, []model.Committable{cm("pfx2.2-0-9", 37, 0), cm("pfx2.2-1-9", 36, 0)}},
		// POOLING: a slot's id, one producer id per slot, the epoch climbing.
		{"2.2-pooling", 6, 10, []model.Committable{at(cm("pfxpool-0-1", 52, 8), 10), at(cm("pfxpool-1-1", 53, 8), 10)}},
	} {
		t.Run(c.version, func(t *testing.T) {
			m, commits, err := checkpointCommits(realMetadata(t, c.version), nil)
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != c.meta || m.ID != c.n || len(m.Operators) == 0 {
				t.Errorf("version %d, checkpoint %d, %d operators; want version %d, checkpoint %d", m.Version, m.ID, len(m.Operators), c.meta, c.n)
			}
			var got []model.Committable
			for _, p := range commits {
				if p.Checkpoint != c.n || p.Finished {
					t.Errorf("%s pre-committed for checkpoint %d (finished %v), want %d, pending", p.ID, p.Checkpoint, p.Finished, c.n)
				}
				got = append(got, p.Committable)
			}
			slices.SortFunc(got, func(a, b model.Committable) int { return strings.Compare(a.ID, b.ID) })
			if !slices.Equal(got, c.want) {
				t.Errorf("committables %v, want %v", got, c.want)
			}
			for _, o := range m.Operators {
				t.Logf("operator %s %q uid %q parallelism %d: %d subtasks", o.ID, o.Name, o.UID, o.Parallelism, len(o.Subtasks))
			}
		})
	}
}

// A _metadata cut short anywhere, or with a byte changed anywhere, is
// refused with where, or decodes to something; it never panics nor makes
// what a count only claims.
func TestDecodeBrokenMetadata(t *testing.T) {
	for _, v := range []string{"1.20", "2.2"} {
		data := realMetadata(t, v)
		for n := range len(data) {
			if _, _, err := checkpointCommits(data[:n], nil); err == nil && n < 200 {
				t.Errorf("Flink %s cut to %d bytes decoded", v, n)
			} else if err != nil && !strings.Contains(err.Error(), "byte") && !strings.Contains(err.Error(), "magic") && !strings.Contains(err.Error(), "version") {
				t.Errorf("Flink %s cut to %d bytes: %v: does not say where", v, n, err)
			}
		}
		for i := range data {
			for _, b := range []byte{0x00, 0x7f, 0x80, 0xff} {
				mut := slices.Clone(data)
				mut[i] = b
				checkpointCommits(mut, nil)
			}
		}
	}
}

// Counts that claim more than the bytes hold are refused before anything
// is made for them.
func TestDecodeHugeCounts(t *testing.T) {
	head := []byte{0x49, 0x60, 0x67, 0x2D, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 9}
	for _, c := range []struct {
		name string
		rest []byte
		want string
	}{
		{"master states", []byte{0x7f, 0xff, 0xff, 0xff}, "master states, more than the 0 bytes left hold"},
		{"operators", []byte{0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff}, "operators, more than"},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff}, "a negative number of master states"},
	} {
		_, _, err := checkpointCommits(append(slices.Clone(head), c.rest...), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	for _, v := range []string{"1.20", "2.2"} {
		f.Add(realMetadata(f, v))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, commits, err := checkpointCommits(data, nil)
		if err == nil && (m == nil || len(commits) > len(data)) {
			t.Fatalf("decoded %+v, %d commits from %d bytes", m, len(commits), len(data))
		}
	})
}

// A committer whose state is in a file beside _metadata is read from it
// when the file is the job's and of the size _metadata says; anything else
// is named, and the checkpoint is not taken for one without the
// transaction.
func TestCommitterStateInAFile(t *testing.T) {
	mine := cm("p-0-7", 11, 2)
	for _, c := range []struct {
		name  string
		setup func(tr tree) // writes jobA/chk-7/_metadata and what it names
		want  string        // a problem; "" when chk-7 holds mine
	}{
		{"relative", func(tr tree) {
			meta, state := testutil.FlinkMetadataInFile(7, "b1c9e4f2-state", mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
			tr.file(jobA+"/chk-7/b1c9e4f2-state", state)
		}, ""},
		{"absolute, in the job's shared directory", func(tr tree) {
			meta, state := testutil.FlinkMetadataInFile(7, "file:"+filepath.Join(tr.dir, jobA, "shared", "s1"), mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
			tr.file(jobA+"/shared/s1", state)
		}, ""},
		{"missing", func(tr tree) {
			meta, _ := testutil.FlinkMetadataInFile(7, "b1c9e4f2-state", mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
		}, `"b1c9e4f2-state" cannot be read: no such file or directory`},
		{"cut short", func(tr tree) {
			meta, state := testutil.FlinkMetadataInFile(7, "b1c9e4f2-state", mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
			tr.file(jobA+"/chk-7/b1c9e4f2-state", state[:len(state)-1])
		}, "holds 128 bytes, the _metadata says 129"},
		{"outside the job's directory", func(tr tree) {
			meta, state := testutil.FlinkMetadataInFile(7, filepath.Join(tr.dir, "elsewhere"), mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
			tr.file("elsewhere", state)
		}, "is outside the job's checkpoint directory (not read)"},
		{"climbing out", func(tr tree) {
			meta, state := testutil.FlinkMetadataInFile(7, "../../elsewhere", mine)
			tr.file(jobA+"/chk-7/_metadata", meta)
			tr.file("elsewhere", state)
		}, "is outside the job's checkpoint directory (not read)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := newTree(t)
			c.setup(tr)
			r := ReadRetained(tr.dir, "p")
			if len(r.Jobs) != 1 {
				t.Fatalf("%+v", r)
			}
			j := r.Jobs[0]
			if c.want == "" {
				if len(j.Problems) != 0 || !slices.EqualFunc(j.Checkpoints, []model.RetainedCheckpoint{{N: 7, Committables: []model.Committable{mine}}}, sameCheckpoint) {
					t.Errorf("%+v, want chk-7 holding %v", j, mine)
				}
				return
			}
			if len(j.Checkpoints) != 0 || len(j.Problems) != 1 || !strings.Contains(j.Problems[0], c.want) || !strings.Contains(j.Problems[0], `"chk-7"`) {
				t.Errorf("%+v, want chk-7 named: %q", j, c.want)
			}
		})
	}
}
