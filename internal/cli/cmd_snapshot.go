package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/memlimit"
	"github.com/txnscope/txnscope/internal/summary"
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
	memlimit.Hold(ctx) // it holds every id described at once
	s, err := cl.Refresh(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", summary.List(c.bootstrap, ",", "bootstrap servers"), err)
	}
	// JSON carries it as "hidden"; the table has no place for it.
	if s.Hidden != "" && c.output != "json" {
		fmt.Fprintf(stderr, "txnscope: note: %s\n", escape.Line(s.Hidden))
	}
	// One poll sees no events; the baseline counts each id's latest outcome, the
	// only one the coordinator keeps.
	h := model.NewHistory(1)
	h.Baseline(s)
	now := s.TakenAt
	if now.IsZero() {
		now = time.Now()
	}
	q := model.Query{CheckpointInterval: c.checkpointInterval}
	if err := writeSnapshot(stdout, c.output, s, h, q, now); err != nil {
		return fmt.Errorf("writing the snapshot: %w", err)
	}
	return nil
}

// writeSnapshot prints s as output ("json" or the table).
func writeSnapshot(w io.Writer, output string, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	if output == "json" {
		return streamJSON(w, s, h, q, now)
	}
	return views.PlainTableQuery(w, s, h, q, now)
}

// streamJSON writes what writeJSON writes for model.ExportQuery, byte for
// byte, without holding the document: at 500k ids that took ~1.1 GB. The
// frame (model.ExportFrame, both lists empty) is encoded whole, so its fields
// keep the schema's order; each row is encoded on its own, indented at its
// depth, and written into the frame's empty list through one buffer.
func streamJSON(w io.Writer, s *model.Snapshot, h *model.History, q model.Query, now time.Time) error {
	var row bytes.Buffer
	var indented []byte
	enc := json.NewEncoder(&row)
	enc.SetEscapeHTML(false)
	// encode is v as writeJSON prints it: indented by prefix after the first
	// line, unsafe characters written out (escape.JSON works within strings,
	// so a whole value is a safe piece to run it on).
	encode := func(v any, prefix string) ([]byte, error) {
		row.Reset()
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		indented = append(indentJSON(indented[:0], bytes.TrimSuffix(row.Bytes(), []byte("\n")), prefix), '\n')
		return escape.JSON(indented), nil
	}
	frame, err := encode(model.ExportFrame(s), "")
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
	var t model.TxnJSON // one for all rows: encode takes a pointer, which escapes
	err = writeRows(bw, len(s.Txns), func(k int) ([]byte, error) {
		t = model.ExportTxn(&s.Txns[k], h, s, q, now)
		return encode(&t, "    ")
	})
	if err != nil {
		return err
	}
	bw.Write(frame[i:j])
	err = writeRows(bw, len(s.Partitions), func(k int) ([]byte, error) {
		p := model.ExportPartition(&s.Partitions[k])
		return encode(&p, "    ")
	})
	if err != nil {
		return err
	}
	bw.Write(frame[j:])
	return bw.Flush()
}

// writeRows writes n encoded rows as the elements of a list whose "[" is
// written and whose "]" follows: none leaves "[]", as encoding/json writes
// an empty list.
func writeRows(bw *bufio.Writer, n int, row func(int) ([]byte, error)) error {
	for k := range n {
		b, err := row(k)
		if err != nil {
			return err
		}
		bw.WriteString("\n    ")
		// A reader gone away (| head) stops the work, not just the output.
		if _, err := bw.Write(bytes.TrimSuffix(b, []byte("\n"))); err != nil {
			return err
		}
		if k < n-1 {
			bw.WriteByte(',')
		}
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	return nil
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
