package flinkrest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
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
// entry(id) until it is about size bytes, newest first, as Flink lists it:
// after counts and latest, as Flink writes them, or before (historyFirst).
// It says how many entries it holds; the newest is numbered that.
func checkpointsAnswer(size int, entry func(id int) string, historyFirst bool) ([]byte, int) {
	top := max(1, size/(len(entry(1000000))+1)) // and its comma
	head := fmt.Sprintf(`"counts":{"restored":0,"total":%d,"in_progress":0,"completed":%[1]d,"failed":0},`+
		`"latest":{"completed":%s,"savepoint":null,"failed":null,"restored":null}`, top, historyEntry(top))
	var b bytes.Buffer
	b.WriteString("{")
	if !historyFirst {
		b.WriteString(head + ",")
	}
	b.WriteString(`"history":[`)
	for id := top; id > 0; id-- {
		if id != top {
			b.WriteByte(',')
		}
		b.WriteString(entry(id))
	}
	b.WriteString("]")
	if historyFirst {
		b.WriteString("," + head)
	}
	b.WriteString("}")
	return b.Bytes(), top
}

// jobID is the n-th job's id of a made-up JobManager.
func jobID(n int) string { return fmt.Sprintf("%032x", n+1) }

// overviewOf is a /jobs/overview answer of n jobs, the i-th in state(i),
// started at i ms (the later, the newer).
func overviewOf(n int, state func(i int) string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jobs":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jid":"%s","name":"job %d","state":"%s","start-time":%d}`, jobID(i), i, state(i), i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func running(int) string { return "RUNNING" }

// pathLog is the paths a fake JobManager was asked for.
type pathLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *pathLog) add(p string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.paths = append(l.paths, p)
}

func (l *pathLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.paths)
}

// fakeJobManager answers at under (e.g. "/", or "/flink/" behind a proxy)
// with overview, and with checkpoints as every job's statistics; log, when
// not nil, has every request's escaped path and query.
func fakeJobManager(tb testing.TB, under string, overview, checkpoints []byte, log *pathLog) *httptest.Server {
	tb.Helper()
	config := []byte(`{"mode":"exactly_once","interval":2000,"timeout":600000}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if log != nil {
			p := r.URL.EscapedPath()
			if r.URL.ForceQuery || r.URL.RawQuery != "" {
				p += "?" + r.URL.RawQuery
			}
			log.add(p)
		}
		if r.Method != http.MethodGet {
			tb.Errorf("%s %s: txnscope only reads", r.Method, r.URL.Path)
		}
		p, ok := strings.CutPrefix(r.URL.Path, strings.TrimSuffix(under, "/"))
		if !ok || r.URL.RawQuery != "" || r.URL.ForceQuery {
			http.NotFound(w, r)
			return
		}
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

// hugeShapes are the ways a JobManager can answer ~8 MB of checkpoint
// history a job: entries as Flink writes them or empty ones (the most
// entries), the history last as Flink writes it or first (no reader can
// stop early at it).
var hugeShapes = []struct {
	name  string
	entry func(int) string
	first bool
}{{"flink", historyEntry, false}, {"tiny", tinyEntry, false}, {"flink/first", historyEntry, true}, {"tiny/first", tinyEntry, true}}

// hugeJobManager is a JobManager of 5 running jobs, each answering ~8 MB
// of checkpoint history; it says how many entries the history holds.
func hugeJobManager(tb testing.TB, entry func(int) string, first bool) (*Client, int) {
	tb.Helper()
	cps, top := checkpointsAnswer(8<<20-4096, entry, first)
	c, err := New(fakeJobManager(tb, "/", overviewOf(5, running), cps, nil).URL)
	if err != nil {
		tb.Fatal(err)
	}
	return c, top
}

// BenchmarkReadHugeJobManager reads a JobManager of 5 jobs whose checkpoint
// statistics are each about 8 MB of history (hugeShapes; issue 31: one such
// read took 2.5 GB). B/op is what one Read allocates, both ends of the
// connection.
func BenchmarkReadHugeJobManager(b *testing.B) {
	for _, s := range hugeShapes {
		b.Run(s.name, func(b *testing.B) {
			c, _ := hugeJobManager(b, s.entry, s.first)
			b.ReportAllocs()
			for b.Loop() {
				v := Read(context.Background(), Sources{Clients: []*Client{c}}, time.Minute)
				if v.Errs[0] != "" || len(v.Jobs) != 5 || !slices.ContainsFunc(v.Jobs, func(j model.FlinkJob) bool { return j.Latest != nil }) {
					b.Fatalf("errors %q, jobs %+v", v.Errs, v.Jobs)
				}
			}
		})
	}
}

// A JobManager answering MBs of checkpoint history per job costs a read
// the newest maxHistory checkpoints of each, and at most maxRead of
// answers: the jobs past it are said not to have been read, and why.
func TestHugeHistoryIsBounded(t *testing.T) {
	for _, s := range hugeShapes {
		if s.name == "tiny/first" {
			continue // the benchmark's: skipping its 11 million entries one by one takes a minute under -race
		}
		t.Run(s.name, func(t *testing.T) {
			c, top := hugeJobManager(t, s.entry, s.first)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			jobs, err := c.Jobs(context.Background())
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			// Before issue 31, 150 MB (flink) to 12 GB (tiny) a read.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("a read allocated %d MB, want at most 16", alloc>>20)
			}
			var read, cut int
			for _, j := range jobs {
				switch j.Err {
				case "":
					read++
					if j.Latest == nil || j.Latest.ID != int64(top) || j.Completed != int64(top) || j.SinkParallelism() != 2 || j.Interval() != 2*time.Second {
						t.Errorf("job %s: latest %+v, completed %d, parallelism %d, interval %s", j.ID, j.Latest, j.Completed, j.SinkParallelism(), j.Interval())
					}
					if len(j.History) != maxHistory {
						t.Errorf("job %s: %d checkpoints of history kept, want the newest %d", j.ID, len(j.History), maxHistory)
					} else if s.entry(0) != "{}" && (j.History[0].ID != int64(top) || j.History[maxHistory-1].ID != int64(top-maxHistory+1)) {
						t.Errorf("job %s: history %d..%d, want the newest, %d..%d", j.ID, j.History[0].ID, j.History[maxHistory-1].ID, top, top-maxHistory+1)
					}
				case "not read: the JobManager's answers passed 32 MB in this read":
					cut++
					if j.Latest != nil || len(j.History) > 0 || len(j.Vertices) > 0 || j.Name == "" {
						t.Errorf("job %s, not read, says %+v", j.ID, j)
					}
				default:
					t.Errorf("job %s: %s", j.ID, j.Err)
				}
			}
			// Read to its end, a history of 8 MB a job leaves 32 MB for
			// at most 4 jobs' answers, fewer when the jobs read at once
			// share it; read as Flink writes it, a job's answers are KBs.
			if s.first && (cut == 0 || read == 0) || !s.first && read != 5 {
				t.Errorf("%d jobs read, %d not read", read, cut)
			}
		})
	}
}

// Of a history longer than maxHistory, the newest are kept, wherever the
// JobManager writes it in its answer; a history that is no list is an
// error of that job alone.
func TestHistoryKeepsTheNewest(t *testing.T) {
	long, _ := checkpointsAnswer(150*len(historyEntry(150)), historyEntry, false)
	longFirst, top := checkpointsAnswer(150*len(historyEntry(150)), historyEntry, true)
	for _, c := range []struct {
		name        string
		checkpoints string
		history     int    // entries kept, the newest first
		err         string // the job's Err holds it
	}{
		{"history last", string(long), maxHistory, ""},
		{"history first", string(longFirst), maxHistory, ""},
		{"short", `{"counts":{"completed":2},"history":[` + historyEntry(2) + `,` + historyEntry(1) + `]}`, 2, ""},
		{"no history", `{"counts":{"completed":0},"history":null}`, 0, ""},
		{"history not a list", `{"history":{"id":1}}`, 0, "not Flink's JSON"},
		{"history of numbers", `{"history":[1,2]}`, 0, "not Flink's JSON"},
		{"history cut short", `{"history":[` + historyEntry(2), 0, "not Flink's JSON"},
		{"not an object", `[]`, 0, "not Flink's JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := New(fakeJobManager(t, "/", overviewOf(1, running), []byte(c.checkpoints), nil).URL)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := cl.Jobs(context.Background())
			if err != nil || len(jobs) != 1 {
				t.Fatalf("jobs %+v, %v", jobs, err)
			}
			j := jobs[0]
			if c.err != "" {
				if !strings.Contains(j.Err, c.err) {
					t.Errorf("job's error %q, want %q in it", j.Err, c.err)
				}
				return
			}
			if j.Err != "" || len(j.History) != c.history {
				t.Fatalf("error %q, %d checkpoints of history, want %d", j.Err, len(j.History), c.history)
			}
			for k, h := range j.History {
				if c.history == maxHistory && h.ID != int64(top-k) || h.Status != "COMPLETED" || h.TriggerMs <= 0 {
					t.Fatalf("history[%d] %+v, want checkpoint %d", k, h, top-k)
				}
			}
		})
	}
}

// Of a JobManager listing more than maxJobs jobs, the running ones and then
// the newest are read; the others are listed, not asked for, and say why.
func TestTooManyJobs(t *testing.T) {
	const n = maxJobs + 50
	state := func(i int) string {
		if i%10 == 0 {
			return "RUNNING" // the oldest included, which must still be read
		}
		return "FINISHED"
	}
	cps, _ := checkpointsAnswer(10*len(historyEntry(10)), historyEntry, false)
	log := &pathLog{}
	c, err := New(fakeJobManager(t, "/", overviewOf(n, state), cps, log).URL)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := c.Jobs(context.Background())
	if err != nil || len(jobs) != n {
		t.Fatalf("%d jobs, %v", len(jobs), err)
	}
	asked := map[string]bool{}
	for _, p := range log.all() {
		asked[p] = true
	}
	want := fmt.Sprintf("not read: the JobManager lists %d jobs; txnscope reads the details of %d, the running then the newest", n, maxJobs)
	var unread int
	for i, j := range jobs {
		if j.ID != jobID(i) {
			t.Fatalf("job %d is %s: the overview's order is not kept", i, j.ID)
		}
		switch {
		case j.Err == "":
			if j.Latest == nil {
				t.Errorf("job %d read without its checkpoints", i)
			}
		case j.Err == want:
			unread++
			if state(i) == "RUNNING" {
				t.Errorf("running job %d not read", i)
			}
			if asked["/jobs/"+j.ID] || asked["/jobs/"+j.ID+"/checkpoints"] {
				t.Errorf("job %d not read, yet asked for", i)
			}
		default:
			t.Errorf("job %d: %s", i, j.Err)
		}
	}
	if unread != n-maxJobs {
		t.Errorf("%d jobs not read, want %d", unread, n-maxJobs)
	}
	// The finished ones read are the newest: of those not read, none is
	// newer than one read.
	oldestRead := n
	for i, j := range jobs {
		if j.Err == "" && state(i) != "RUNNING" {
			oldestRead = min(oldestRead, i)
		}
	}
	for i, j := range jobs {
		if j.Err != "" && i > oldestRead {
			t.Errorf("finished job %d not read, yet the older %d was", i, oldestRead)
			break
		}
	}
}

// A JobManager behind a proxy at a path is asked at that path; a query or
// fragment, even a bare '?' or '#', is refused rather than sent in front
// of the API's path.
func TestBasePath(t *testing.T) {
	id := jobID(0)
	cps, _ := checkpointsAnswer(2*len(historyEntry(2)), historyEntry, false)
	for _, c := range []struct{ under, given, want string }{
		{"/", "", ""},
		{"/", "/", ""},
		{"/flink/", "/flink/", "/flink"},
		{"/flink/", "/flink", "/flink"},
		{"/a/flink/", "/a//flink/", "/a/flink"},
		{"/fl ink/", "/fl%20ink/", "/fl%20ink"},
	} {
		t.Run(c.given, func(t *testing.T) {
			log := &pathLog{}
			srv := fakeJobManager(t, c.under, overviewOf(1, running), cps, log)
			cl, err := New(srv.URL + c.given)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := cl.Jobs(context.Background())
			if err != nil || len(jobs) != 1 || jobs[0].Err != "" {
				t.Fatalf("jobs %+v, %v", jobs, err)
			}
			got := log.all()
			slices.Sort(got)
			want := []string{c.want + "/jobs/" + id, c.want + "/jobs/" + id + "/checkpoints", c.want + "/jobs/" + id + "/checkpoints/config", c.want + "/jobs/overview"}
			if !slices.Equal(got, want) {
				t.Errorf("asked for %q, want %q", got, want)
			}
			if cl.URL() != strings.TrimSuffix(srv.URL+c.given, "/") || jobs[0].Source != cl.URL() {
				t.Errorf("shown as %q, job's source %q", cl.URL(), jobs[0].Source)
			}
		})
	}
	for _, raw := range []string{"http://jm:8081/flink?", "http://jm:8081/flink/?", "http://jm:8081?", "http://jm:8081/?a=1", "http://jm:8081/flink#", "http://jm:8081#", "http://jm:8081/flink#top", "http://jm:8081/?#"} {
		_, err := New(raw)
		if err == nil || !strings.Contains(err.Error(), "a query or fragment ('?' or '#') has no place") || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%q): %v, want a one-line refusal of the query or fragment", raw, err)
		}
	}
}

// Whatever the shape of --flink's user info, and whether or not it parses,
// no message shows it; those that parse send it.
func TestUserInfoNeverShown(t *testing.T) {
	var (
		mu       sync.Mutex
		gotUser  string
		gotPass  string
		gotBasic bool
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotUser, gotPass, gotBasic = r.BasicAuth()
		mu.Unlock()
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		raw      string // HOST: the test server's
		user     string // sent, "" when raw is refused
		password string
	}{
		{"http://Ops:HunterTwo@HOST", "Ops", "HunterTwo"},
		{"http://OpsOnly@HOST", "OpsOnly", ""},
		{"https://Ops:HunterTwo@[::1]:8081", "", ""}, // parses; not asked
		{"http://Ops:Hunter%23Two@HOST", "Ops", "Hunter#Two"},
		{"http://Ops:Hunter%2FTwo%3F%25%20@HOST", "Ops", "Hunter/Two?% "},
		{"http://Ops:Hunter@Two@HOST", "Ops", "Hunter@Two"},
		{"http://Ops:Hunter:Two@HOST", "Ops", "Hunter:Two"},
		{"http://Ops:Hunter#Two@HOST", "", ""},
		{"http://Ops:Hunter/Two@HOST", "", ""},
		{"http://Ops:Hunter/s#Two@HOST", "", ""},
		{"http://Ops:Hunter?Two@HOST", "", ""},
		{"http://Ops:Hunter%zzTwo@HOST", "", ""},
		{"http://Ops:Hunter%Two@HOST", "", ""},
		{"http://Ops:Hunter Two@HOST", "", ""},
		{"http://Ops:HunterÜTwo@HOST", "", ""},
		{"http://Ops:Hunter\x1b[2JTwo@HOST", "", ""},
		{"http://Ops:123#Two@HOST", "", ""},  // parses, with a fragment
		{"http://Ops:8081/Two@HOST", "", ""}, // parses, host Ops and a path
		{"http://Ops:Hunter#Two@[::1]:8081", "", ""},
		{"http://Ops:Hunter?Two@[::1]:8081/flink", "", ""},
		{"Ops:HunterTwo@HOST", "", ""},
		{"//Ops:HunterTwo@HOST", "", ""},
		{"http:/Ops:HunterTwo@HOST", "", ""},
		{"ftp://Ops:HunterTwo@HOST", "", ""},
		{"http://Ops:HunterTwo@", "", ""},
		{"http://Ops:Hunter://Two@HOST", "", ""},
	} {
		raw := strings.ReplaceAll(c.raw, "HOST", host)
		t.Run(c.raw, func(t *testing.T) {
			shown := func(what, s string) {
				t.Helper()
				for _, secret := range []string{"Ops", "Hunter", "Two"} {
					if strings.Contains(s, secret) {
						t.Errorf("%s %q shows %q", what, s, secret)
					}
				}
			}
			cl, err := New(raw)
			if err != nil {
				shown("error", err.Error())
				if !strings.Contains(err.Error(), "must be percent-encoded") || strings.ContainsAny(err.Error(), "\n\x1b") {
					t.Errorf("error %q: want one line saying such characters must be percent-encoded", err)
				}
				if c.user != "" {
					t.Errorf("refused, want it sent: %v", err)
				}
				return
			}
			shown("URL()", cl.URL())
			if c.user == "" && !strings.Contains(raw, "[::1]") {
				t.Fatalf("accepted as %s, want it refused", cl.URL())
			}
			if c.user == "" {
				return
			}
			_, errs := Poll(context.Background(), []*Client{cl}, time.Second)
			shown("Poll's error", errs[0])
			mu.Lock()
			defer mu.Unlock()
			if errs[0] == "" || !gotBasic || gotUser != c.user || gotPass != c.password {
				t.Errorf("error %q; sent user %q password %q (%v), want %q %q", errs[0], gotUser, gotPass, gotBasic, c.user, c.password)
			}
		})
	}
}

// A JobManager (or its proxy) that redirects or compresses is read as
// before; the limits are on what the answers decompress to.
func TestRedirectAndGzip(t *testing.T) {
	id := jobID(0)
	cps, top := checkpointsAnswer(3*len(historyEntry(3)), historyEntry, false)
	inner := fakeJobManager(t, "/", overviewOf(1, running), cps, nil)
	gz := func(b []byte) []byte {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(b)
		w.Close()
		return z.Bytes()
	}
	bomb := gz([]byte(`{"jobs":[],"x":"` + strings.Repeat("0", maxBody) + `"}`))
	for _, c := range []struct {
		name string
		bomb bool
		want string // the overview's error
	}{{"redirect and gzip", false, ""}, {"gzip bomb", true, "GET /jobs/overview: the answer is over 8 MB"}} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
					t.Errorf("%s asked for without gzip", r.URL.Path)
				}
				if r.URL.Path != "/jobs/overview" {
					http.Redirect(w, r, inner.URL+r.URL.Path, http.StatusFound)
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				if c.bomb {
					w.Write(bomb)
					return
				}
				w.Write(gz(overviewOf(1, running)))
			}))
			defer srv.Close()
			cl, err := New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := cl.Jobs(context.Background())
			if c.want != "" {
				if err == nil || err.Error() != c.want {
					t.Errorf("error %v, want %q", err, c.want)
				}
				return
			}
			if err != nil || len(jobs) != 1 || jobs[0].Err != "" || jobs[0].ID != id || jobs[0].Latest == nil || len(jobs[0].History) != top {
				t.Errorf("jobs %+v, %v", jobs, err)
			}
		})
	}
}
