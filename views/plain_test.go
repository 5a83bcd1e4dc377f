package views

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

func TestPlainTable(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tp := func(n int32) model.TopicPartition { return model.TopicPartition{Topic: "orders", Partition: n} }
	s := &model.Snapshot{TakenAt: now, Txns: []model.Txn{
		{ID: "orders-enricher-v1-0-17", State: model.Ongoing, ProducerID: 4001, ProducerEpoch: 3, Coordinator: 1,
			TimeoutMs: 60000, StartUnixMs: now.Add(-12 * time.Second).UnixMilli(), Partitions: []model.TopicPartition{tp(0), tp(1)}, Described: true},
		{ID: "inventory-sync-v7-2-5", State: model.Ongoing, ProducerID: 12, ProducerEpoch: 0, Coordinator: 2,
			TimeoutMs: 60000, StartUnixMs: now.Add(-57 * time.Second).UnixMilli(), Partitions: []model.TopicPartition{tp(4)}, Described: true},
		{ID: "payments-dedup-v3-1-9", State: model.CompleteAbort, ProducerID: 77, ProducerEpoch: 5, Coordinator: 0,
			TimeoutMs: 900000, Described: true},
		{ID: "not described", State: model.Ongoing, ProducerID: 99, Coordinator: -1},
		{ID: "reports-backfill-0-1", State: model.Ongoing, ProducerID: 5, ProducerEpoch: 1, Coordinator: 0,
			TimeoutMs: 900000, StartUnixMs: now.Add(-8*time.Minute - 3*time.Second).UnixMilli(), Partitions: []model.TopicPartition{tp(7)}, Described: true},
	}}
	s.Sort()
	h := model.NewHistory(10)
	h.Add([]model.Event{
		{At: now, ID: "payments-dedup-v3-1-9", Kind: model.Committed},
		{At: now, ID: "payments-dedup-v3-1-9", Kind: model.Committed},
		{At: now, ID: "payments-dedup-v3-1-9", Kind: model.TimedOut},
	})
	var b bytes.Buffer
	if err := PlainTable(&b, s, h, now); err != nil {
		t.Fatal(err)
	}
	want := `
TRANSACTIONAL ID         STATE          PRODUCER  PARTS  AGE    TIMEOUT  %    LAST       COMMITS  ABORTS  COORD  PROBLEMS
inventory-sync-v7-2-5    Ongoing        12/0      1      57s    1m       95%  -          0        0       2      over half of its timeout
reports-backfill-0-1     Ongoing        5/1       1      8m03s  15m      54%  -          0        0       0      over half of its timeout
orders-enricher-v1-0-17  Ongoing        4001/3    2      12s    1m       20%  -          0        0       1      -
"not described"          Ongoing        99/-      -      -      -        -    -          0        0       -      -
payments-dedup-v3-1-9    CompleteAbort  77/5      0      -      15m      -    timed-out  2        1       0      last transaction aborted at timeout
`[1:]
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestPlainTableEmptyAndOddIDs(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	if err := PlainTable(&b, &model.Snapshot{}, nil, now); err != nil {
		t.Fatal(err)
	}
	if strings.Count(b.String(), "\n") != 1 || !strings.HasPrefix(b.String(), "TRANSACTIONAL ID") {
		t.Errorf("an empty cluster prints the header only, got %q", b.String())
	}
	b.Reset()
	s := &model.Snapshot{Txns: []model.Txn{{ID: "tab\there", State: model.Empty}, {ID: "a\x1bb", State: model.Empty}}}
	s.Sort()
	if err := PlainTable(&b, s, nil, now); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, `"tab\there"`) || !strings.Contains(out, `"a\x1bb"`) || strings.Contains(out, "\x1b") {
		t.Errorf("ids with tabs or escapes must be quoted:\n%s", out)
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := len(strings.Fields(line)); n != 12 && !strings.HasPrefix(line, "TRANSACTIONAL ID") {
			t.Errorf("line %q has %d fields, want 12", line, n)
		}
	}
}

// TestPlainTableCheckpointInterval: with the jobs' checkpoint interval, a timeout below twice it is
// in the PROBLEMS column; the rows keep the default order; a problem quoting a cluster error with a
// tab or newline stays in its cell.
func TestPlainTableCheckpointInterval(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &model.Snapshot{TakenAt: now, Txns: []model.Txn{
		{ID: "short-0-1", State: model.Ongoing, ProducerID: 1, TimeoutMs: 15000, StartUnixMs: now.Add(-time.Second).UnixMilli(), Described: true},
		{ID: "long-0-1", State: model.Ongoing, ProducerID: 2, TimeoutMs: 60000, StartUnixMs: now.Add(-time.Second).UnixMilli(), Described: true},
		{ID: "odd", State: model.Empty, Err: "bad\tthing\nhappened"},
	}}
	s.Sort()
	var b bytes.Buffer
	if err := PlainTableQuery(&b, s, nil, model.Query{CheckpointInterval: 10 * time.Second, Filter: model.FilterProblems}, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 || !strings.HasSuffix(lines[0], "PROBLEMS") {
		t.Fatalf("want the header and every row (the filter is not applied):\n%s", b.String())
	}
	want := map[string]string{
		"short-0-1": "timeout below 2× the checkpoint interval",
		"long-0-1":  "-",
		"odd":       `bad\tthing\nhappened`, // the cluster's text: written out, never collapsed
	}
	for _, l := range lines[1:] {
		id := strings.Fields(l)[0]
		if !strings.HasSuffix(l, "  "+want[id]) {
			t.Errorf("row %q does not end with %q", l, want[id])
		}
	}
	if !strings.HasPrefix(lines[1], "short-0-1") {
		t.Errorf("rows not in the default order (most urgent first):\n%s", b.String())
	}
	b.Reset()
	if err := PlainTable(&b, s, nil, now); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "checkpoint") {
		t.Errorf("without the interval nothing is judged against it:\n%s", b.String())
	}
}

// TestPlainTableDisplayWidth: the columns line up in terminal cells, wide
// (CJK) and combining characters included, and ids that could be taken for
// another's quoted form are quoted themselves.
func TestPlainTableDisplayWidth(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &model.Snapshot{Txns: []model.Txn{
		{ID: "注文処理-0-1", State: model.Empty}, {ID: "e\u0301te\u0301-0-1", State: model.Empty},
		{ID: "orders-0-1", State: model.Empty}, {ID: `"a\tb"`, State: model.Empty}, {ID: "a\tb", State: model.Empty},
	}}
	s.Sort()
	var b bytes.Buffer
	if err := PlainTable(&b, s, nil, now); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	at := func(l, word string) int { return ansi.StringWidth(l[:strings.Index(l, word)]) }
	for _, l := range lines[1:] {
		if at(l, " Empty ")+1 != at(lines[0], "STATE") {
			t.Errorf("STATE at cell %d, Empty at %d: %q", at(lines[0], "STATE"), at(l, " Empty ")+1, l)
		}
	}
	if !strings.Contains(b.String(), `"\"a\\tb\""`) || !strings.Contains(b.String(), `"a\tb" `) {
		t.Errorf("a quoted-looking id is not quoted itself:\n%s", b.String())
	}
}

// plainTableWhole is PlainTableQuery as it was before it streamed: every cell
// held, measured with ansi.StringWidth, then written. The reference the
// streaming table must match byte for byte.
func plainTableWhole(s *model.Snapshot, h *model.History, q model.Query, now time.Time) string {
	q = model.Query{CheckpointInterval: q.CheckpointInterval}
	rows := [][]string{plainHeader[:]}
	for _, i := range model.Rows(s, h, q, now) {
		t := &s.Txns[i]
		st := h.Stats(t.ID)
		rows = append(rows, []string{
			plainID(t.ID), plainID(t.State.String()), fmt.Sprintf("%d/%s", t.ProducerID, plainEpoch(t)), plainParts(t), plainAge(t, now),
			plainTimeout(t), plainRatio(t, now), plainLast(st.Last), strconv.Itoa(st.Commits), strconv.Itoa(st.Aborts), plainCoord(t.Coordinator),
			plainProblems(model.Problems(*t, st, s, q, now)),
		})
	}
	widths := make([]int, len(plainHeader)-1)
	for _, r := range rows {
		for i := range widths {
			widths[i] = max(widths[i], ansi.StringWidth(r[i]))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for i, c := range r[:len(r)-1] {
			b.WriteString(c + strings.Repeat(" ", widths[i]-ansi.StringWidth(c)+2))
		}
		b.WriteString(r[len(r)-1] + "\n")
	}
	return b.String()
}

// TestPlainTableSameAsWhole: the streamed table is byte for byte the table
// built whole, on random snapshots with hostile and wide ids, odd timeouts,
// errors, open and finished transactions, and over 64 KiB of output.
func TestPlainTableSameAsWhole(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ids := []string{"orders-enricher-v1-0-17", "注文処理-0-1", "e\u0301te\u0301-0-1", "a\x1b[31mb", "c1\u0085", "bidi\u202e",
		"bad\xff", "del\x7f", `"quoted"`, "tab\there", "sp ace", "", "x"}
	states := []model.State{model.Empty, model.Ongoing, model.PrepareCommit, model.PrepareAbort, model.CompleteCommit,
		model.CompleteAbort, model.Dead, model.PrepareEpochFence}
	timeouts := []int32{0, 60000, 900000, 15000, 1500, 61000, 3600000}
	kinds := []model.EventKind{model.Committed, model.Aborted, model.TimedOut, model.Fenced}
	r := rand.New(rand.NewPCG(11, 2))
	for n := range 200 {
		s := &model.Snapshot{TakenAt: now, BrokerMaxTimeoutMs: int64(r.IntN(2)) * 900000}
		h := model.NewHistory(50)
		rows := r.IntN(40)
		if n == 0 {
			rows = 3000 // past the buffer
		}
		for k := range rows {
			tx := model.Txn{ID: fmt.Sprintf("%s-%d", ids[r.IntN(len(ids))], k), State: states[r.IntN(len(states))],
				ProducerID: r.Int64N(1 << 40), ProducerEpoch: int16(r.IntN(300)), Coordinator: int32(r.IntN(4) - 1),
				TimeoutMs: timeouts[r.IntN(len(timeouts))], Described: r.IntN(4) > 0}
			if r.IntN(2) == 0 {
				tx.SetStart(now.Add(-time.Duration(r.Int64N(int64(50 * time.Hour)))))
			}
			if r.IntN(3) == 0 {
				tx.Partitions = make([]model.TopicPartition, r.IntN(4))
			}
			if r.IntN(6) == 0 {
				tx.Err = ids[r.IntN(len(ids))] + "\nhappened"
			}
			if r.IntN(3) == 0 {
				h.Add([]model.Event{{At: now, ID: tx.ID, Kind: kinds[r.IntN(len(kinds))]}})
			}
			s.Txns = append(s.Txns, tx)
		}
		s.Sort()
		q := model.Query{CheckpointInterval: time.Duration(r.IntN(3)) * 20 * time.Second}
		var b bytes.Buffer
		if err := PlainTableQuery(&b, s, h, q, now); err != nil {
			t.Fatal(err)
		}
		if want := plainTableWhole(s, h, q, now); b.String() != want {
			t.Fatalf("streamed table differs:\n%s\nwant\n%s", b.String(), want)
		}
	}
}

type failingWriter struct{ writes int }

func (w *failingWriter) Write([]byte) (int, error) { w.writes++; return 0, errors.New("broken pipe") }

// TestPlainTableStopsOnWriteError: a reader that went away (snapshot | head)
// ends the table at the first failed write.
func TestPlainTableStopsOnWriteError(t *testing.T) {
	s := &model.Snapshot{}
	for i := range 20_000 {
		s.Txns = append(s.Txns, model.Txn{ID: fmt.Sprintf("sink-%d-%d", i%50, i), State: model.CompleteCommit, TimeoutMs: 60000})
	}
	s.Sort()
	w := &failingWriter{}
	if err := PlainTable(w, s, nil, time.Now()); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("err = %v, want the write error", err)
	}
	if w.writes != 1 {
		t.Errorf("%d writes after the first failed, want none", w.writes-1)
	}
}

// TestPlainIDQuickPath: the ASCII shortcut quotes exactly what the full rule
// (spaces, unprintable runes, bytes that are not UTF-8, a leading quote) quotes.
func TestPlainIDQuickPath(t *testing.T) {
	full := func(id string) string {
		if id == "" || id[0] == '"' || !utf8.ValidString(id) ||
			strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
			return strconv.Quote(id)
		}
		return id
	}
	ids := []string{"", `"`, `a"`, "orders-enricher-v1-0-17", "注文-0-1", "\u00a0nbsp", "e\u0301", "注文-\xff", "\xe6\xb3"}
	for c := range 256 {
		ids = append(ids, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	for _, id := range ids {
		if got, want := plainID(id), full(id); got != want {
			t.Errorf("plainID(%q) = %q, want %q", id, got, want)
		}
	}
}
