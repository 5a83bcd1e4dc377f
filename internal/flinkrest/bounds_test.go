package flinkrest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// historyEntry is one entry of /jobs/:id/checkpoints' history as Flink
// 2.2 writes it (testdata/2.2), numbered id.
func historyEntry(id int) string {
	return fmt.Sprintf(`{"className":"completed","id":%d,"status":"COMPLETED","is_savepoint":false,"savepointFormat":null,`+
		`"trigger_timestamp":%d,"latest_ack_timestamp":%d,"checkpointed_size":2306,"state_size":2306,"end_to_end_duration":20,`+
		`"alignment_buffered":0,"processed_data":0,"persisted_data":0,"num_subtasks":2,"num_acknowledged_subtasks":2,`+
		`"checkpoint_type":"CHECKPOINT","tasks":{},"external_path":"file:/tmp/fx/chk/50eeb37c4bce2276a4237ec3373d16f0/chk-%d","discarded":false}`,
		id, 1796162190390+int64(id)*2000, 1796162190410+int64(id)*2000, id)
}

// tinyEntry is the least a history entry can be: what a hostile
// JobManager sends to have the most of them.
func tinyEntry(int) string { return "{}" }

// checkpointsAnswer is a /jobs/:id/checkpoints answer whose history holds
// entry(id) until it is about size bytes, newest first, as Flink lists it.
func checkpointsAnswer(size int, entry func(id int) string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"counts":{"restored":0,"total":1000000,"in_progress":0,"completed":1000000,"failed":0},"latest":{"completed":`)
	top := size/len(entry(1000000)) + 1
	b.WriteString(historyEntry(top))
	b.WriteString(`,"savepoint":null,"failed":null,"restored":null},"history":[`)
	for id := top; id > 0 && b.Len() < size-len(entry(id))-2; id-- {
		if id != top {
			b.WriteByte(',')
		}
		b.WriteString(entry(id))
	}
	b.WriteString("]}")
	return b.Bytes()
}

// jobID is the n-th job's id of a made-up JobManager.
func jobID(n int) string { return fmt.Sprintf("%032x", n+1) }

// bigJobManager answers as a JobManager of n running jobs, each with a
// /jobs/:id/checkpoints answer of about historySize bytes; paths records
// every path asked for, when not nil.
func bigJobManager(tb testing.TB, n, historySize int, entry func(int) string, paths chan<- string) *httptest.Server {
	tb.Helper()
	var ov strings.Builder
	ov.WriteString(`{"jobs":[`)
	for i := range n {
		if i > 0 {
			ov.WriteByte(',')
		}
		fmt.Fprintf(&ov, `{"jid":"%s","name":"job %d","state":"RUNNING","start-time":%d}`, jobID(i), i, 1796162164497+int64(i))
	}
	ov.WriteString("]}")
	overview := []byte(ov.String())
	checkpoints := checkpointsAnswer(historySize, entry)
	config := []byte(`{"mode":"exactly_once","interval":2000,"timeout":600000}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if paths != nil {
			paths <- r.URL.Path
		}
		p := r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		switch {
		case p == "/jobs/overview":
			w.Write(overview)
		case strings.HasSuffix(p, "/checkpoints/config"):
			w.Write(config)
		case strings.HasSuffix(p, "/checkpoints"):
			w.Write(checkpoints)
		case strings.HasPrefix(p, "/jobs/"):
			fmt.Fprintf(w, `{"jid":"%s","vertices":[{"name":"Source -> Sink: Writer","parallelism":2}]}`, strings.TrimPrefix(p, "/jobs/"))
		default:
			http.NotFound(w, r)
		}
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// BenchmarkReadHugeJobManager reads a JobManager of 5 jobs whose checkpoint
// statistics are each about 8 MB of history, of entries as Flink writes
// them ("flink") or of empty ones ("tiny", issue 31: one such read took
// 2.5 GB). B/op is what one Read allocates, both ends of the connection.
func BenchmarkReadHugeJobManager(b *testing.B) {
	for _, c := range []struct {
		name  string
		entry func(int) string
	}{{"flink", historyEntry}, {"tiny", tinyEntry}} {
		b.Run(c.name, func(b *testing.B) {
			srv := bigJobManager(b, 5, 8<<20-4096, c.entry, nil)
			cl, err := New(srv.URL)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				v := Read(context.Background(), Sources{Clients: []*Client{cl}}, time.Minute)
				if v.Errs[0] != "" || len(v.Jobs) != 5 || v.Jobs[0].Latest == nil {
					b.Fatalf("errors %q, jobs %d, first job's %+v", v.Errs, len(v.Jobs), v.Jobs[0])
				}
			}
		})
	}
}
