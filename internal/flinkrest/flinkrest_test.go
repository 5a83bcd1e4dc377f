package flinkrest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveDir answers as a JobManager from testdata/<version>: what real Flink
// 1.20.5 and 2.2.1 MiniClusters answered (scripts/flinkjob, a job restored
// from its checkpoint 13, parallelism 2, checkpoints every 2 s).
func serveDir(t *testing.T, version string) (*httptest.Server, string) {
	t.Helper()
	dir := filepath.Join("testdata", version)
	var ov struct {
		Jobs []struct {
			ID string `json:"jid"`
		} `json:"jobs"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "overview.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ov); err != nil || len(ov.Jobs) != 1 {
		t.Fatalf("%s/overview.json: %v", dir, err)
	}
	id := ov.Jobs[0].ID
	files := map[string]string{
		"/jobs/overview":                      "overview.json",
		"/jobs/" + id:                         "job.json",
		"/jobs/" + id + "/checkpoints":        "checkpoints.json",
		"/jobs/" + id + "/checkpoints/config": "config.json",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: txnscope only reads", r.Method, r.URL.Path)
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(dir, f))
	}))
	t.Cleanup(srv.Close)
	return srv, id
}

func TestJobsFromRealFlink(t *testing.T) {
	for _, v := range []string{"1.20", "2.2"} {
		t.Run(v, func(t *testing.T) {
			srv, id := serveDir(t, v)
			c, err := New(srv.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := c.Jobs(context.Background())
			if err != nil || len(jobs) != 1 {
				t.Fatalf("Jobs: %v, %v", jobs, err)
			}
			j := jobs[0]
			switch {
			case j.Err != "":
				t.Errorf("details: %s", j.Err)
			case j.ID != id || j.Name != "flinkjob fx"+v || j.State != "RUNNING" || j.StartMs <= 0 || j.Source != srv.URL:
				t.Errorf("job %+v", j)
			case j.SinkParallelism() != 2 || j.Interval() != 2*time.Second || j.CheckpointTimeoutMs != 600000:
				t.Errorf("sink parallelism %d, interval %s, checkpoint timeout %d ms", j.SinkParallelism(), j.Interval(), j.CheckpointTimeoutMs)
			case j.Restored == nil || j.Restored.ID != 13 || j.Restored.RestoreMs <= 0 || !strings.HasSuffix(j.Restored.Path, "/chk-13"):
				t.Errorf("restored %+v, want checkpoint 13", j.Restored)
			case j.Latest == nil || j.Latest.ID <= 13 || j.Latest.Status != "COMPLETED" || j.Latest.AckMs < j.Latest.TriggerMs || j.Latest.TriggerMs <= 0:
				t.Errorf("latest completed %+v", j.Latest)
			case j.Completed < 1 || len(j.History) == 0 || j.History[0].ID < j.Latest.ID:
				t.Errorf("completed %d, history %+v", j.Completed, j.History)
			}
		})
	}
}

// A JobManager that answers wrong is one error, never a crash or a hang.
func TestJobManagerThatAnswersWrong(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	overview := `{"jobs":[{"jid":"` + id + `","name":"j","state":"RUNNING","start-time":1}]}`
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		want    string // in the overview's error, or the job's Err with jobErr
		jobErr  bool
	}{
		{"not found", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, "GET /jobs/overview: 404 Not Found", false},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>login</html>")) }, "not Flink's JSON", false},
		{"too big", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"jobs":[],"x":"`))
			w.Write([]byte(strings.Repeat("a", maxBody)))
			w.Write([]byte(`"}`))
		}, "over 8 MB", false},
		{"slow", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "context deadline exceeded", false},
		{"a job's details fail", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/jobs/overview" {
				w.Write([]byte(overview))
				return
			}
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "GET /jobs/" + id + ": 500 Internal Server Error", true},
		{"a job id that is not Flink's", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/jobs/overview" {
				t.Errorf("asked for %s", r.URL.Path)
			}
			w.Write([]byte(`{"jobs":[{"jid":"../../admin?x=1","name":"j","state":"RUNNING"}]}`))
		}, `job id "../../admin?x=1" is not Flink's`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			cl, err := New(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			// Only the slow JobManager is meant to time out; under -race on a
			// loaded machine, 8 MB through httptest can take more than 500 ms.
			timeout := 10 * time.Second
			if c.name == "slow" {
				timeout = 500 * time.Millisecond
			}
			jobs, errs := Poll(context.Background(), []*Client{cl}, timeout)
			got := errs[0]
			if c.jobErr {
				if len(jobs) != 1 {
					t.Fatalf("jobs %+v, errors %q", jobs, errs)
				}
				got = jobs[0].Err
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want %q in it", got, c.want)
			}
			if !c.jobErr && !strings.HasPrefix(got, srv.URL+": ") {
				t.Errorf("%q does not name the JobManager", got)
			}
		})
	}
}

func TestNewRefusesWhatIsNotAJobManagerURL(t *testing.T) {
	for _, raw := range []string{"", "localhost:8081", "ftp://h:1", "http://", "http://h:1/?q=1", "http://h:1/#x", "http://h\x1b[31m:1"} {
		if _, err := New(raw); err == nil || strings.ContainsRune(err.Error(), 0x1b) {
			t.Errorf("New(%q): %v", raw, err)
		}
	}
	for _, raw := range []string{"http://127.0.0.1:8081", "https://flink.example:443/proxy/jm/"} {
		if _, err := New(raw); err != nil {
			t.Errorf("New(%q): %v", raw, err)
		}
	}
}

// A password in --flink's URL is sent, never shown.
func TestPasswordNeverShown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "ops" || p != "s3cret" {
			t.Errorf("basic auth %q %q %v", u, p, ok)
		}
		http.Error(w, "no", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, err := New(strings.Replace(srv.URL, "http://", "http://ops:s3cret@", 1))
	if err != nil {
		t.Fatal(err)
	}
	v := Read(context.Background(), Sources{Clients: []*Client{c}}, time.Second)
	if strings.Contains(c.URL()+v.Errs[0]+strings.Join(v.Sources, ""), "s3cret") || v.Errs[0] == "" {
		t.Errorf("shown: %q, %q, %q", c.URL(), v.Errs, v.Sources)
	}
}
