package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/internal/memlimit"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
	"github.com/txnscope/txnscope/views"
)

// snapshot reads the cluster once and prints it, as the UI would show it.
const cmdSnapshot command = "snapshot"

func runSnapshot(ctx context.Context, c config, std Stdio) error {
	stdout, stderr := std.Out, std.Err
	warnInsecure(c, stderr)
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: c.bootstrap, Timeout: c.timeout, Security: c.security})
	if err != nil {
		return usageError{err.Error()}
	}
	defer cl.Close()
	memlimit.HoldOnce(ctx) // it holds every id described at once
	// The JobManagers are read beside the cluster, not after it.
	flink := make(chan *model.FlinkView, 1)
	go func() { flink <- readFlink(ctx, c) }()
	s, h, rp, err := readSnapshot(ctx, cl, c, stderr)
	if err != nil {
		return err
	}
	now := s.TakenAt
	q := model.Query{CheckpointInterval: c.checkpointInterval, Flink: <-flink}
	if q.Flink != nil && c.output != "json" {
		for _, e := range q.Flink.Errs {
			if e != "" {
				fmt.Fprintf(stderr, "txnscope: note: flink %s\n", escape.Line(e))
			}
		}
	}
	if q.Flink != nil {
		for _, prefix := range slices.Sorted(maps.Keys(q.Flink.Retained)) {
			r := q.Flink.Retained[prefix]
			problems := slices.Clone(r.Problems)
			for _, j := range r.Jobs {
				for _, p := range j.Problems {
					problems = append(problems, j.Dir+": "+p)
				}
			}
			if r.Err != "" {
				problems = []string{r.Err}
			}
			for _, p := range problems {
				fmt.Fprintf(stderr, "txnscope: note: --flink-checkpoints %s: %s\n", escape.Quote(prefix), escape.Line(p))
			}
		}
	}
	if err := writeSnapshot(stdout, c.output, s, h, q, now, rp); err != nil {
		return fmt.Errorf("writing the snapshot: %w", err)
	}
	return nil
}

// checkSnapshot refuses --since with --history polls: one replays the
// log, the other reads none of it.
func checkSnapshot(c *config, given func(string) bool) error {
	if given("since") && c.history == "polls" {
		return usagef("--since replays the coordinators' log and --history polls reads none of it: give one")
	}
	return nil
}

// replayLimit bounds the events a snapshot lists: an hour of 500,000 Flink
// ids is millions.
const replayLimit = 100000

// defaultWindow is how much of the coordinators' log a snapshot replays
// without --since, when it may read it: what the UI, following the log, knows
// of the jobs' recent commits (a restart's lingering ids, a job not
// committing) rests on such a history, and one read of the cluster has none.
const defaultWindow = time.Hour

// readSnapshot reads the cluster once, with the history the snapshot rests
// on: with --since, or by default when it may be read, the coordinators'
// log's window replayed (one read of the log, which also gives the rows:
// RefreshReplayed); with --history polls, or a log it cannot read, one read
// of the cluster, whose baseline counts each id's latest outcome. rp is the
// replay --since prints.
func readSnapshot(ctx context.Context, cl *kafkaadmin.Client, c config, stderr io.Writer) (s *model.Snapshot, h *model.History, rp *replay, err error) {
	h = model.NewHistory(1)
	window := c.since
	if window == 0 && c.history == "auto" {
		window = defaultWindow
	}
	var r *model.Replayed
	why := "--history polls"
	since := time.Now().Add(-window)
	if window > 0 {
		s, r, why, err = cl.RefreshReplayed(ctx, since, replayLimit)
	} else {
		s, err = cl.Refresh(ctx, nil)
	}
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", shortList(c.bootstrap, ",", "bootstrap servers"), err)
	}
	// JSON carries it as "hidden"; the table has no place for it.
	if s.Hidden != "" && c.output != "json" {
		fmt.Fprintf(stderr, "txnscope: note: %s\n", escape.Line(s.Hidden))
	}
	switch {
	case r != nil:
		// The log tells every outcome of the window, and who ended it.
		s.Source = model.Source{Log: true, Since: r.Oldest, Unread: model.UnreadLine(r.Unread), Window: since}
		h.Add(r.Events)
		if c.since > 0 {
			rp = &replay{Replayed: *r, since: since}
		}
		if s.Source.Unread != "" && (c.since > 0 || c.output != "json") {
			// Exit status 0: what could be read is printed, and says from
			// when it is complete; -o json lists the records (unreadable).
			what := "history"
			if c.since > 0 {
				what = "replay"
			}
			fmt.Fprintf(stderr, "txnscope: note: %s; the %s is complete only after them\n", escape.Line(s.Source.Unread), what)
		}
	case c.since > 0:
		return nil, nil, nil, fmt.Errorf("--since: cannot replay the coordinators' log: %s", why)
	default:
		// One poll sees no events; the baseline counts each id's latest
		// outcome, the only one the coordinator keeps.
		s.Source.Why = "one read of the cluster (--history polls)"
		if c.history != "polls" {
			s.Source.Why = "one read of the cluster: the coordinators' log could not be read (" + oneLine(why) + ")"
		}
		h.Baseline(s)
	}
	return s, h, rp, nil
}

// replay is what the coordinators' log holds of a window.
type replay struct {
	model.Replayed
	since time.Time
}

// writeSnapshot prints s as output ("json" or the table), and the replay
// when there is one.
func writeSnapshot(w io.Writer, output string, s *model.Snapshot, h *model.History, q model.Query, now time.Time, rp *replay) error {
	if output == "json" {
		var r *jsonout.ReplayJSON
		if rp != nil {
			r = jsonout.ExportReplay(rp.Replayed, rp.since, replayLimit)
		}
		return streamJSON(w, s, h, q, now, r)
	}
	if err := views.PlainTableQuery(w, s, h, q, now); err != nil || rp == nil {
		return err
	}
	return views.PlainReplay(w, rp.Replayed, rp.since, replayLimit)
}

// streamJSON writes what writeJSON writes for jsonout.ExportQuery, byte for
// byte, without holding the document: at 500k ids that took ~1.1 GB. The
// frame (jsonout.ExportFrame, both lists empty) is encoded whole, so its fields
// keep the schema's order; each row is encoded on its own, indented at its
// depth, and written into the frame's empty list through one buffer.
func streamJSON(w io.Writer, s *model.Snapshot, h *model.History, q model.Query, now time.Time, r *jsonout.ReplayJSON) error {
	encode := newValueEncoder().encode
	doc := jsonout.ExportFrame(s, h, q, now)
	doc.Replay = r
	frame, err := encode(doc, "")
	if err != nil {
		return err
	}
	frame = bytes.Clone(frame) // encode's buffers are reused for the rows
	// A string value cannot hold these markers: its quotes are escaped.
	txns, parts := []byte("\n  \"transactions\": ["), []byte("\n  \"partitions\": [")
	i, j := bytes.Index(frame, txns), bytes.Index(frame, parts)
	if i < 0 || j < i {
		return errors.New("the JSON frame has no empty lists to fill") // the schema changed under us
	}
	i, j = i+len(txns), j+len(parts)
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(frame[:i])
	if err := writeTxnRows(bw, s, h, q, now); err != nil {
		return err
	}
	bw.Write(frame[i:j])
	var plain []byte
	err = writeRows(bw, len(s.Partitions), func(k int) ([]byte, error) {
		p := jsonout.ExportPartition(&s.Partitions[k])
		if b, ok := appendPartitionRow(plain[:0], &p); ok {
			plain = b
			return b, nil
		}
		return encode(&p, "    ")
	})
	if err != nil {
		return err
	}
	bw.Write(frame[j:])
	return bw.Flush()
}

// valueEncoder writes values as writeJSON prints them, through buffers it
// reuses.
type valueEncoder struct {
	row      bytes.Buffer
	enc      *json.Encoder
	indented []byte
}

func newValueEncoder() *valueEncoder {
	e := &valueEncoder{}
	e.enc = json.NewEncoder(&e.row)
	e.enc.SetEscapeHTML(false)
	return e
}

// encode is v as writeJSON prints it: indented by prefix after the first
// line, unsafe characters written out (escape.JSON works within strings, so
// a whole value is a safe piece to run it on). The bytes are e's until the
// next call.
func (e *valueEncoder) encode(v any, prefix string) ([]byte, error) {
	e.row.Reset()
	if err := e.enc.Encode(v); err != nil {
		return nil, err
	}
	e.indented = append(indentJSON(e.indented[:0], bytes.TrimSuffix(e.row.Bytes(), []byte("\n")), prefix), '\n')
	return escape.JSON(e.indented), nil
}

// txnRow encodes the transactions' rows one by one, through buffers of its
// own: the bytes are its until the next call.
func txnRow(s *model.Snapshot, h *model.History, q model.Query, now time.Time) func(int) ([]byte, error) {
	encode := newValueEncoder().encode
	var t jsonout.TxnJSON // one for all rows: encode takes a pointer, which escapes
	var plain []byte
	return func(k int) ([]byte, error) {
		t = jsonout.ExportTxn(&s.Txns[k], h, s, q, now)
		if b, ok := appendTxnRow(plain[:0], &t); ok {
			plain = b
			return b, nil
		}
		return encode(&t, "    ")
	}
}

// rowsChunk is how many rows one core encodes at a time, and rowWorkers
// on how many cores (0: up to four) (writeTxnRows).
var rowsChunk, rowWorkers = 1024, 0

// writeTxnRows writes the transactions' rows as writeRows does, encoded on
// up to four cores a chunk at a time and written in order: at 2,000,000 ids
// one core took 2.7 s of an 11 s snapshot. What it encodes only reads the
// snapshot and the history.
func writeTxnRows(bw *bufio.Writer, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	n := len(s.Txns)
	workers := cmp.Or(rowWorkers, min(runtime.GOMAXPROCS(0), 4))
	if workers < 2 || n <= rowsChunk {
		return writeRows(bw, n, txnRow(s, h, q, now))
	}
	type encoded struct {
		b   []byte
		err error
	}
	type chunk struct {
		from int
		out  chan encoded
	}
	done := make(chan struct{})
	work, order := make(chan chunk), make(chan chunk, 2*workers)
	free := make(chan []byte, 3*workers)
	var wg sync.WaitGroup
	defer func() {
		close(done) // a failed write stops the encoding, not just the output
		wg.Wait()
	}()
	wg.Go(func() {
		defer close(work)
		defer close(order)
		for from := 0; from < n; from += rowsChunk {
			c := chunk{from: from, out: make(chan encoded, 1)}
			select {
			case order <- c:
			case <-done:
				return
			}
			select {
			case work <- c:
			case <-done:
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			row := txnRow(s, h, q, now)
			for c := range work {
				var b []byte
				select {
				case b = <-free:
				default:
				}
				var err error
				for k := c.from; k < min(c.from+rowsChunk, n) && err == nil; k++ {
					var r []byte
					if r, err = row(k); err == nil {
						b = appendElement(b, r, k == n-1)
					}
				}
				c.out <- encoded{b, err}
			}
		})
	}
	for c := range order {
		e := <-c.out
		if e.err != nil {
			return e.err
		}
		// A reader gone away (| head) stops the work, not just the output.
		if _, err := bw.Write(e.b); err != nil {
			return err
		}
		select {
		case free <- e.b[:0]:
		default:
		}
	}
	bw.WriteString("\n  ")
	return nil
}

// writeRows writes n encoded rows as the elements of a list whose "[" is
// written and whose "]" follows: none leaves "[]", as encoding/json writes
// an empty list.
func writeRows(bw *bufio.Writer, n int, row func(int) ([]byte, error)) error {
	var elem []byte
	for k := range n {
		b, err := row(k)
		if err != nil {
			return err
		}
		elem = appendElement(elem[:0], b, k == n-1)
		// A reader gone away (| head) stops the work, not just the output.
		if _, err := bw.Write(elem); err != nil {
			return err
		}
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	return nil
}

// appendElement appends row, encoded, as an element of the list at the
// rows' depth: on a line of its own, a comma after it unless it is the last.
func appendElement(dst, row []byte, last bool) []byte {
	dst = append(dst, "\n    "...)
	dst = append(dst, bytes.TrimSuffix(row, []byte("\n"))...)
	if !last {
		dst = append(dst, ',')
	}
	return dst
}

// indentJSON appends src, compact JSON as encoding/json writes it (no space
// outside strings), to dst as json.Indent(dst, src, prefix, "  ") would.
// json.Indent validates as it goes, byte by byte through its scanner: at 500k
// ids that was half of the document's time, and encoding/json's own output
// needs no validating.
func indentJSON(dst, src []byte, prefix string) []byte {
	depth := 0
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '"':
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++ // the escaped character, a quote perhaps
				}
			}
			dst = append(dst, src[i:min(j+1, len(src))]...)
			i = j
		case '{', '[':
			dst = append(dst, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				dst = append(dst, src[i+1]) // empty: [] and {} stay on one line
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
