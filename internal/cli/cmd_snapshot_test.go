package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/testutil"
	"github.com/txnscope/txnscope/model"
)

// wholeJSON is what snapshot -o json printed before it streamed: the whole
// document, encoded at once.
func wholeJSON(t *testing.T, s *model.Snapshot, h *model.History, q model.Query, now time.Time) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writeJSON(&b, jsonout.ExportQuery(s, h, q, now)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hostile are strings the cluster may hand us: terminal escapes, C1 controls,
// bidi overrides, line separators, invalid UTF-8, HTML, JSON syntax, and the
// very markers the stream splices at.
var hostile = []string{
	"", "plain-0-1", "a\x1b[31mred\x1b[0m", "c1\u0085\u009b", "bidi\u202eevil", "ls\u2028ps\u2029",
	"bad\xff\xfeutf8", "del\x7f", "<script>&amp;", `quote"back\slash`, "\n  \"transactions\": [],",
	`"partitions": []`, "注文処理-0-1", "tab\there", "e\u0301te\u0301",
}

func randomSnapshot(r *rand.Rand) (*model.Snapshot, *model.History, model.Query) {
	pick := func() string {
		if r.IntN(3) == 0 {
			return hostile[r.IntN(len(hostile))] + hostile[r.IntN(len(hostile))]
		}
		return hostile[r.IntN(len(hostile))]
	}
	states := []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.PrepareAbort, model.CompleteCommit,
		model.CompleteAbort, model.Dead, model.PrepareEpochFence}
	s := &model.Snapshot{TakenAt: benchAt.Add(time.Duration(r.IntN(1000)) * time.Millisecond), Bootstrap: pick()}
	if r.IntN(2) == 0 {
		s.BrokerMaxTimeoutMs = int64(r.IntN(1_000_000))
	}
	if r.IntN(3) == 0 {
		s.Hidden = pick()
	}
	for range r.IntN(30) {
		t := model.Txn{ID: pick(), State: states[r.IntN(len(states))], ProducerID: r.Int64N(1 << 40),
			ProducerEpoch: int16(r.IntN(100)), Coordinator: int32(r.IntN(4) - 1), TimeoutMs: int32(r.IntN(120_000)),
			Described: r.IntN(4) > 0}
		if r.IntN(2) == 0 {
			t.SetStart(s.TakenAt.Add(-time.Duration(r.IntN(200_000)) * time.Millisecond))
		}
		for range r.IntN(3) {
			t.Partitions = append(t.Partitions, model.TopicPartition{Topic: pick(), Partition: int32(r.IntN(10))})
		}
		if r.IntN(5) == 0 {
			t.Err = pick()
		}
		s.Txns = append(s.Txns, t)
	}
	for range r.IntN(4) {
		p := model.Partition{TopicPartition: model.TopicPartition{Topic: pick(), Partition: int32(r.IntN(10))},
			Leader: int32(r.IntN(3)), HighWatermark: r.Int64N(1000) - 1, LastStableOffset: r.Int64N(1000) - 1}
		switch r.IntN(3) {
		case 0:
			p.ProducersDenied, p.Err = true, model.NoPermission+": "+pick()
		case 1:
			for range r.IntN(3) {
				pr := model.Producer{ProducerID: r.Int64N(1000), LastSequence: int32(r.IntN(100)), CurrentTxnStartOffset: r.Int64N(100) - 1}
				if r.IntN(2) == 0 {
					pr.LastWriteMs = model.WriteMs(time.UnixMilli(1_700_000_000_000 + r.Int64N(1e9)))
				}
				p.Producers = append(p.Producers, pr)
			}
		}
		s.Partitions = append(s.Partitions, p)
	}
	s.Sort()
	h := model.NewHistory(10)
	h.Baseline(s)
	q := model.Query{}
	if r.IntN(2) == 0 {
		q.CheckpointInterval = time.Duration(r.IntN(60)) * time.Second
	}
	if r.IntN(2) == 0 {
		// A JobManager's strings are as hostile as the cluster's: a job
		// named after an id's prefix matches it.
		q.Flink = &model.FlinkView{At: s.TakenAt, Sources: []string{pick()}, Errs: []string{pick()}}
		for range r.IntN(4) {
			j := model.FlinkJob{Source: q.Flink.Sources[0], ID: pick(), Name: pick() + " " + pick(), State: pick(), Err: pick(),
				Vertices: []model.FlinkVertex{{Name: pick(), Parallelism: r.IntN(4)}}, IntervalMs: r.Int64N(10_000)}
			if r.IntN(2) == 0 {
				j.Latest = &model.FlinkCheckpoint{ID: r.Int64N(100), TriggerMs: r.Int64N(2e12), AckMs: r.Int64N(2e12), Path: pick()}
			}
			q.Flink.Jobs = append(q.Flink.Jobs, j)
		}
	}
	return s, h, q
}

// TestStreamJSONSameBytes: the streamed document is byte for byte what the
// whole one was, on an empty cluster, the Flink fixture, and random snapshots
// full of hostile strings (still written out by escape.JSON's rules).
func TestStreamJSONSameBytes(t *testing.T) {
	check := func(t *testing.T, s *model.Snapshot, h *model.History, q model.Query) {
		t.Helper()
		var got bytes.Buffer
		if err := streamJSON(&got, s, h, q, benchAt, nil); err != nil {
			t.Fatal(err)
		}
		want := wholeJSON(t, s, h, q, benchAt)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("streamed JSON differs from the whole document:\n%s\nwant\n%s", got.Bytes(), want)
		}
		if !json.Valid(got.Bytes()) {
			t.Fatalf("not valid JSON:\n%s", got.Bytes())
		}
		for _, bad := range []string{"\x1b", "\u0085", "\u202e", "\u2028", "\x7f"} {
			if strings.Contains(got.String(), bad) {
				t.Fatalf("%q printed raw:\n%s", bad, got.Bytes())
			}
		}
	}
	t.Run("empty", func(t *testing.T) { check(t, &model.Snapshot{TakenAt: benchAt}, nil, model.Query{}) })
	t.Run("flink", func(t *testing.T) {
		s, h := flinkScale(3000)
		check(t, s, h, model.Query{CheckpointInterval: time.Minute})
	})
	r := rand.New(rand.NewPCG(11, 500_000))
	for range 300 {
		s, h, q := randomSnapshot(r)
		check(t, s, h, q)
	}
	// The rows encoded on three cores, a few at a time: the same bytes.
	defer func(n, w int) { rowsChunk, rowWorkers = n, w }(rowsChunk, rowWorkers)
	rowsChunk, rowWorkers = 3, 3
	t.Run("flink on three cores", func(t *testing.T) {
		s, h := flinkScale(3000)
		check(t, s, h, model.Query{CheckpointInterval: time.Minute})
	})
	for range 100 {
		s, h, q := randomSnapshot(r)
		check(t, s, h, q)
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write([]byte) (int, error) { w.writes++; return 0, errors.New("broken pipe") }

// TestStreamJSONStopsOnWriteError: a reader that went away (snapshot | head)
// ends the work at the first failed write instead of encoding every id.
func TestStreamJSONStopsOnWriteError(t *testing.T) {
	s, h := flinkScale(50_000)
	defer func(w int) { rowWorkers = w }(rowWorkers)
	rowWorkers = 3 // on three cores, the encoding stops too
	w := &failingWriter{}
	if err := streamJSON(w, s, h, model.Query{}, benchAt, nil); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("err = %v, want the write error", err)
	}
	if w.writes != 1 {
		t.Errorf("%d writes after the first failed, want none", w.writes-1)
	}
}

// TestIndentJSON: indentJSON indents encoding/json's output exactly as
// json.Indent does, for every shape the document has and strings full of
// JSON syntax.
func TestIndentJSON(t *testing.T) {
	values := []any{
		map[string]any{}, []any{}, nil, 1.5, "x", []any{[]any{}, map[string]any{}, []any{1, []any{2}}},
		map[string]any{"a": map[string]any{"b": []any{}, "c": "{[,:]}\"\\", "d": []any{"]", "\\"}}},
	}
	for _, h := range hostile {
		values = append(values, map[string]any{h: []any{h, map[string]any{"k" + h: h}}})
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		s, h, q := randomSnapshot(r)
		values = append(values, jsonout.ExportQuery(s, h, q, benchAt))
	}
	for _, prefix := range []string{"", "    "} {
		for _, v := range values {
			compact, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Indent(&want, compact, prefix, "  "); err != nil {
				t.Fatal(err)
			}
			if got := indentJSON(nil, compact, prefix); !bytes.Equal(got, want.Bytes()) {
				t.Errorf("prefix %q, %s:\ngot  %s\nwant %s", prefix, compact, got, want.Bytes())
			}
		}
	}
}

// TestStreamJSONWithReplay: snapshot --since's replay rides in the streamed
// frame after the lists: valid JSON, the events as exported, hostile ids
// written out.
func TestStreamJSONWithReplay(t *testing.T) {
	s := &model.Snapshot{TakenAt: benchAt}
	var evs []model.Event
	for i, id := range hostile {
		evs = append(evs, model.Event{At: benchAt.Add(time.Duration(i) * time.Second), ID: id, Kind: model.Committed,
			Logged: true, Begun: benchAt, Parts: 2, Detail: id})
	}
	r := jsonout.ExportReplay(model.Replayed{Events: evs, Complete: benchAt, Oldest: benchAt.Add(-2 * time.Hour)}, benchAt.Add(-time.Hour), 100)
	var got bytes.Buffer
	if err := streamJSON(&got, s, model.NewHistory(1), model.Query{}, benchAt, r); err != nil {
		t.Fatal(err)
	}
	testutil.CheckSnapshotJSON(t, got.Bytes())
	var doc jsonout.SnapshotJSON
	if err := json.Unmarshal(got.Bytes(), &doc); err != nil {
		t.Fatalf("not valid JSON: %v\n%s", err, got.Bytes())
	}
	if doc.Replay == nil || len(doc.Replay.Events) != len(hostile) || doc.Replay.Limit != 100 ||
		doc.Replay.CompleteSince == nil || !doc.Replay.CompleteSince.Equal(benchAt) {
		t.Fatalf("replay %+v", doc.Replay)
	}
	for i, e := range doc.Replay.Events {
		if (utf8.ValidString(hostile[i]) && e.TransactionalID != hostile[i]) || e.DurationMs == nil || *e.DurationMs != int64(i)*1000 || *e.Partitions != 2 {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	for _, bad := range []string{"\x1b", "\u0085", "\u202e", "\u2028", "\x7f"} {
		if bytes.Contains(got.Bytes(), []byte(bad)) {
			t.Errorf("raw %q in the output", bad)
		}
	}
}
