package testutil

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// FakeJob is one job as a FakeJobManager lists it: Latest is its latest
// completed checkpoint (0: none), triggered at TriggerMs and acknowledged at
// AckMs (Unix ms), retained at Path (its external path; "" none).
type FakeJob struct {
	ID, Name, State          string
	StartMs                  int64
	Latest, TriggerMs, AckMs int64
	Path                     string
}

// FakeJobManager answers as a Flink JobManager's REST API on 127.0.0.1, in
// Flink's JSON: /jobs/overview, and per job /jobs/<id>, its checkpoint
// configuration and statistics. Script says, for the n-th read of the
// overview (from 1), which jobs it lists and with what HTTP status it
// answers: a JobManager that fails over, or a job that comes back, between
// a plan and its re-check.
type FakeJobManager struct {
	*httptest.Server
	mu    sync.Mutex
	reads int
	jobs  []FakeJob
}

// NewFakeJobManager serves script until the test ends.
func NewFakeJobManager(t testing.TB, script func(read int) (jobs []FakeJob, status int)) *FakeJobManager {
	jm := &FakeJobManager{}
	jm.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			t.Errorf("%s %s: txnscope only reads a JobManager", r.Method, r.URL.Path)
		}
		jm.mu.Lock()
		defer jm.mu.Unlock()
		if r.URL.Path == "/jobs/overview" {
			jm.reads++
			jobs, status := script(jm.reads)
			if status != http.StatusOK {
				http.Error(w, "not the leader", status)
				return
			}
			jm.jobs = jobs
			var list []map[string]any
			for _, j := range jobs {
				list = append(list, map[string]any{"jid": j.ID, "name": j.Name, "state": j.State, "start-time": j.StartMs})
			}
			json.NewEncoder(w).Encode(map[string]any{"jobs": list})
			return
		}
		id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/jobs/"), "/")
		var j *FakeJob
		for i := range jm.jobs {
			if jm.jobs[i].ID == id {
				j = &jm.jobs[i]
			}
		}
		if j == nil {
			http.NotFound(w, r)
			return
		}
		switch rest {
		case "":
			json.NewEncoder(w).Encode(map[string]any{"vertices": []map[string]any{{"name": "Source -> Sink: Writer -> Sink: Committer", "parallelism": 1}}})
		case "checkpoints/config":
			json.NewEncoder(w).Encode(map[string]any{"interval": 2000, "timeout": 600000})
		case "checkpoints":
			doc := map[string]any{"counts": map[string]any{"completed": j.Latest}, "latest": map[string]any{"completed": nil}, "history": []any{}}
			if j.Latest > 0 {
				cp := map[string]any{"id": j.Latest, "status": "COMPLETED", "trigger_timestamp": j.TriggerMs, "latest_ack_timestamp": j.AckMs, "external_path": j.Path}
				doc["latest"], doc["history"] = map[string]any{"completed": cp}, []any{cp}
			}
			json.NewEncoder(w).Encode(doc)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(jm.Close)
	return jm
}

// Reads is how many times the overview was read.
func (jm *FakeJobManager) Reads() int {
	jm.mu.Lock()
	defer jm.mu.Unlock()
	return jm.reads
}
