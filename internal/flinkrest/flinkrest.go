// Package flinkrest reads a Flink JobManager's REST API: its jobs, their
// state and vertices, their checkpoint configuration and statistics. It
// only reads (GET): it never triggers, cancels or changes anything.
package flinkrest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// Client reads one JobManager.
type Client struct {
	base string // scheme://[user:pass@]host[:port][/path], no trailing slash
	// shown is base without its user info: what messages and the JSON say.
	shown string
	hc    *http.Client
}

// maxBody bounds what one answer may be: /jobs/:id/checkpoints carries the
// history and per-task statistics, tens of KB; a JobManager (or whatever
// answers at its address) sending more is not believed.
const maxBody = 8 << 20

// parallelJobs bounds the jobs whose details are read at once.
const parallelJobs = 4

// New checks raw (an http or https URL of a JobManager's REST endpoint).
func New(raw string) (*Client, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--flink %s: want the JobManager's REST address, http://HOST:PORT or https://HOST:PORT", escape.Quote(raw))
	}
	c := &Client{base: strings.TrimSuffix(u.String(), "/"), hc: &http.Client{}}
	u.User = nil
	c.shown = strings.TrimSuffix(u.String(), "/")
	return c, nil
}

// URL is the JobManager's address as given, without a password in it.
func (c *Client) URL() string { return c.shown }

// Jobs reads every job the JobManager knows (running and archived ones),
// each with its details; a job whose details cannot be read is kept with
// Err set. The error is for the overview alone: a JobManager that does not
// answer.
func (c *Client) Jobs(ctx context.Context) ([]model.FlinkJob, error) {
	var ov struct {
		Jobs []struct {
			ID    string `json:"jid"`
			Name  string `json:"name"`
			State string `json:"state"`
			Start int64  `json:"start-time"`
		} `json:"jobs"`
	}
	if err := c.get(ctx, "/jobs/overview", &ov); err != nil {
		return nil, err
	}
	out := make([]model.FlinkJob, len(ov.Jobs))
	sem := make(chan struct{}, parallelJobs)
	var wg sync.WaitGroup
	for i, j := range ov.Jobs {
		out[i] = model.FlinkJob{Source: c.shown, ID: j.ID, Name: j.Name, State: j.State, StartMs: j.Start}
		if !validID(j.ID) {
			out[i].Err = "job id " + escape.Quote(j.ID) + " is not Flink's"
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := c.details(ctx, &out[i]); err != nil {
				out[i].Err = err.Error()
			}
		})
	}
	wg.Wait()
	return out, nil
}

// validID is a Flink JobID: 32 hex digits. Anything else is not put in a
// URL path.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

func (c *Client) details(ctx context.Context, j *model.FlinkJob) error {
	var job struct {
		Vertices []struct {
			Name        string `json:"name"`
			Parallelism int    `json:"parallelism"`
		} `json:"vertices"`
	}
	if err := c.get(ctx, "/jobs/"+j.ID, &job); err != nil {
		return err
	}
	for _, v := range job.Vertices {
		j.Vertices = append(j.Vertices, model.FlinkVertex{Name: v.Name, Parallelism: v.Parallelism})
	}
	var conf struct {
		Interval int64 `json:"interval"`
		Timeout  int64 `json:"timeout"`
	}
	// A job without checkpointing answers this with an error: nothing to
	// say of its interval, and its statistics are empty.
	if err := c.get(ctx, "/jobs/"+j.ID+"/checkpoints/config", &conf); err == nil {
		j.IntervalMs, j.CheckpointTimeoutMs = conf.Interval, conf.Timeout
	}
	var st struct {
		Counts struct {
			Completed  int64 `json:"completed"`
			Failed     int64 `json:"failed"`
			InProgress int64 `json:"in_progress"`
		} `json:"counts"`
		Latest struct {
			Completed *checkpointJSON `json:"completed"`
			Restored  *checkpointJSON `json:"restored"`
		} `json:"latest"`
		History []checkpointJSON `json:"history"`
	}
	if err := c.get(ctx, "/jobs/"+j.ID+"/checkpoints", &st); err != nil {
		return err
	}
	j.Completed, j.Failed, j.InProgress = st.Counts.Completed, st.Counts.Failed, st.Counts.InProgress
	if st.Latest.Completed != nil {
		cp := st.Latest.Completed.model()
		j.Latest = &cp
	}
	if st.Latest.Restored != nil {
		cp := st.Latest.Restored.model()
		j.Restored = &cp
	}
	for _, h := range st.History {
		j.History = append(j.History, h.model())
	}
	return nil
}

type checkpointJSON struct {
	ID        int64  `json:"id"`
	Status    string `json:"status"`
	Trigger   int64  `json:"trigger_timestamp"`
	Ack       int64  `json:"latest_ack_timestamp"`
	Restore   int64  `json:"restore_timestamp"`
	Path      string `json:"external_path"`
	Savepoint bool   `json:"is_savepoint"`
}

func (c checkpointJSON) model() model.FlinkCheckpoint {
	return model.FlinkCheckpoint{ID: c.ID, Status: c.Status, TriggerMs: c.Trigger, AckMs: c.Ack, RestoreMs: c.Restore, Path: c.Path, Savepoint: c.Savepoint}
}

// get reads path's JSON into v.
func (c *Client) get(ctx context.Context, path string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is said once, by the caller
		}
		return fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if len(body) > maxBody {
		return fmt.Errorf("GET %s: the answer is over %d MB", path, maxBody>>20)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("GET %s: not Flink's JSON: %w", path, err)
	}
	return nil
}

// Poll reads every JobManager of cs at once, each within timeout, and says
// per JobManager what went wrong ("" when nothing): one that does not
// answer is one line, never the others' loss.
func Poll(ctx context.Context, cs []*Client, timeout time.Duration) ([]model.FlinkJob, []string) {
	jobs := make([][]model.FlinkJob, len(cs))
	errs := make([]string, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			js, err := c.Jobs(ctx)
			if err != nil {
				errs[i] = c.shown + ": " + err.Error()
			}
			jobs[i] = js
		})
	}
	wg.Wait()
	var out []model.FlinkJob
	for _, js := range jobs {
		out = append(out, js...)
	}
	return out, errs
}

// Sources are what --flink, --flink-prefix and --flink-checkpoints name.
type Sources struct {
	Clients  []*Client
	Prefixes map[string]string // Flink job name or id → prefix
	Retained map[string]string // prefix → retained-checkpoint directory
}

// Read reads every JobManager (each within timeout) and every retained
// directory once.
func Read(ctx context.Context, src Sources, timeout time.Duration) *model.FlinkView {
	jobs, errs := Poll(ctx, src.Clients, timeout)
	v := &model.FlinkView{Jobs: jobs, Errs: errs, At: time.Now(), Prefixes: src.Prefixes}
	for _, c := range src.Clients {
		v.Sources = append(v.Sources, c.shown)
	}
	for prefix, dir := range src.Retained {
		if v.Retained == nil {
			v.Retained = map[string]model.RetainedDir{}
		}
		v.Retained[prefix] = ReadRetained(dir, prefix)
	}
	return v
}

// Watch reads src every `every`, each JobManager within timeout, until ctx
// ends, and returns the latest reading: nil until the first is in. A slow
// JobManager delays only the next reading, never its reader.
func Watch(ctx context.Context, src Sources, every, timeout time.Duration) func() *model.FlinkView {
	var latest atomic.Pointer[model.FlinkView]
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			v := Read(ctx, src, timeout)
			if ctx.Err() != nil {
				return
			}
			latest.Store(v)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return latest.Load
}

// Reverifier reads the commit evidence of an open transaction of job j
// afresh from src at every call, never from an earlier answer: each read of
// the JobManagers and directories is its own.
func Reverifier(src Sources, j model.Job, timeout time.Duration) model.Reverify {
	return func(ctx context.Context, fresh model.Txn) (model.CommitEvidence, error) {
		if len(src.Clients) == 0 && len(src.Retained) == 0 {
			return model.CommitEvidence{}, errors.New("no --flink or --flink-checkpoints to read it from")
		}
		return model.CommitEvidenceOf(Read(ctx, src, timeout), j, fresh), nil
	}
}
