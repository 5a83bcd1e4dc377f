// Package flinkrest reads a Flink JobManager's REST API: its jobs, their
// state and vertices, their checkpoint configuration and statistics. It
// only reads (GET): it never triggers, cancels or changes anything.
package flinkrest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/txnscope/txnscope/internal/ckptstore"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// Client reads one JobManager.
type Client struct {
	// base is the JobManager's address with its user info, the only place
	// that holds it: requests are built from it, never messages.
	base *url.URL
	// shown is base without its user info: what messages and the JSON say.
	shown string
	hc    *http.Client
}

// maxBody bounds what one answer may be. A session cluster's
// /jobs/overview lists every archived job and a large job graph's /jobs/:id
// carries its plan, both MBs in honest hands; the checkpoint history, the
// part that grows without end, is read only as far as it is kept
// (maxHistory). A JobManager (or whatever answers at its address) sending
// more is not believed.
const maxBody = 8 << 20

// maxRead bounds what all the answers of one read of one JobManager may
// be: a JobManager of many jobs, each answering up to maxBody, would
// otherwise take GBs at every refresh. Honest answers are tens of KB a job,
// so maxJobs jobs fit many times over.
const maxRead = 32 << 20

// maxJobs bounds the jobs whose details are read at each read of one
// JobManager: three requests each, within one --timeout. A session cluster
// keeps its finished jobs listed for an hour; the running and newest ones
// are the ones a transaction can belong to.
const maxJobs = 200

// maxHistory bounds the checkpoints kept of a job's history. Flink keeps 10
// unless web.checkpoints.history says more; the newest are the ones an open
// transaction can be waiting on.
const maxHistory = 100

// parallelJobs bounds the jobs whose details are read at once.
const parallelJobs = 4

// New checks raw (an http or https URL of a JobManager's REST endpoint, with
// a path when it is behind a proxy). Its messages never show raw's user
// info: a password that keeps raw from parsing would otherwise be printed.
func New(raw string) (*Client, error) {
	u, err := url.Parse(raw)
	if err == nil && strings.ContainsAny(raw, "?#") {
		// A query or fragment would end up after the API's path, or in
		// front of it: GET /flink?/jobs/overview.
		return nil, fmt.Errorf("--flink %s: a query or fragment ('?' or '#') has no place in the JobManager's REST address, http://HOST:PORT[/PATH]%s", escape.Quote(hideUser(raw)), encodeHint(raw))
	}
	// An '@' in the path is most likely a password's: "ops:8081/pw@jm"
	// parses as host ops, port 8081, and its path would be shown.
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" || strings.Contains(u.Path, "@") {
		return nil, fmt.Errorf("--flink %s: want the JobManager's REST address, http://HOST:PORT or https://HOST:PORT%s", escape.Quote(hideUser(raw)), encodeHint(raw))
	}
	if u.Path == "" {
		u.Path, u.RawPath = "/", "" // JoinPath keeps an empty path relative: GET jobs/overview
	}
	c := &Client{base: u, hc: &http.Client{}}
	shown := *u
	shown.User = nil
	c.shown = strings.TrimSuffix(shown.String(), "/")
	return c, nil
}

// hideUser is raw with everything that could be user info written as ***:
// all between "://" (else the start) and the last '@'. It does not parse
// raw, which may not parse: a '/', '?' or '#' in a password ends the host
// part early for a parser, never for this. A path holding '@' is hidden
// too, which costs the message some of the address, never the password.
func hideUser(raw string) string {
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return raw
	}
	from := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		from = i + len("://")
	}
	return raw[:from] + "***" + raw[at:]
}

// encodeHint is what to say of raw's user info: characters a URL gives a
// meaning to must be percent-encoded in a password.
func encodeHint(raw string) string {
	if !strings.Contains(raw, "@") {
		return ""
	}
	return "; in a user name or password, the characters # / ? % @ : space and non-ASCII must be percent-encoded (%23 %2F %3F %25 %40 %3A %20)"
}

// URL is the JobManager's address as given, without a password in it.
func (c *Client) URL() string { return c.shown }

// errBudget is an answer cut because the read's answers passed maxRead.
var errBudget = fmt.Errorf("the JobManager's answers passed %d MB in this read", maxRead>>20)

// errTooBig is an answer cut at maxBody.
var errTooBig = fmt.Errorf("the answer is over %d MB", maxBody>>20)

// notRead is the Err of a job whose details were cut by errBudget.
var notRead = "not read: " + errBudget.Error()

// Jobs reads every job the JobManager knows (running and archived ones),
// each with its details; a job whose details cannot be read is kept with
// Err set, as are those past maxJobs and maxRead. The error is for the
// overview alone: a JobManager that does not answer.
func (c *Client) Jobs(ctx context.Context) ([]model.FlinkJob, error) {
	var ov struct {
		Jobs []struct {
			ID    string `json:"jid"`
			Name  string `json:"name"`
			State string `json:"state"`
			Start int64  `json:"start-time"`
		} `json:"jobs"`
	}
	left := new(atomic.Int64)
	left.Store(maxRead)
	if err := c.get(ctx, left, &ov, "jobs", "overview"); err != nil {
		return nil, err
	}
	out := make([]model.FlinkJob, len(ov.Jobs))
	var toRead []int
	for i, j := range ov.Jobs {
		out[i] = model.FlinkJob{Source: c.shown, ID: j.ID, Name: j.Name, State: j.State, StartMs: j.Start}
		if !validID(j.ID) {
			out[i].Err = "job id " + escape.Quote(j.ID) + " is not Flink's"
			continue
		}
		toRead = append(toRead, i)
	}
	if len(toRead) > maxJobs {
		// The ones a transaction can belong to first: running, then newest.
		slices.SortStableFunc(toRead, func(a, b int) int {
			return cmp.Or(-cmp.Compare(rank(out[a].State), rank(out[b].State)), -cmp.Compare(out[a].StartMs, out[b].StartMs))
		})
		skipped := fmt.Sprintf("not read: the JobManager lists %d jobs; txnscope reads the details of %d, the running then the newest", len(toRead), maxJobs)
		for _, i := range toRead[maxJobs:] {
			out[i].Err = skipped
		}
		toRead = toRead[:maxJobs]
	}
	sem := make(chan struct{}, parallelJobs)
	var wg sync.WaitGroup
	for _, i := range toRead {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if left.Load() <= 0 {
				out[i].Err = notRead
				return
			}
			switch err := c.details(ctx, left, &out[i]); {
			case errors.Is(err, errBudget):
				// What was read before the cut is dropped: "not read" is
				// the whole of what is known of its details.
				j := out[i]
				out[i] = model.FlinkJob{Source: j.Source, ID: j.ID, Name: j.Name, State: j.State, StartMs: j.StartMs, Err: notRead}
			case err != nil:
				out[i].Err = err.Error()
			}
		})
	}
	wg.Wait()
	return out, nil
}

// rank orders jobs by how likely their transactions are still open.
func rank(state string) int {
	if model.FlinkRunning(state) {
		return 1
	}
	return 0
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

func (c *Client) details(ctx context.Context, left *atomic.Int64, j *model.FlinkJob) error {
	var job struct {
		Vertices []struct {
			Name        string `json:"name"`
			Parallelism int    `json:"parallelism"`
		} `json:"vertices"`
	}
	if err := c.get(ctx, left, &job, "jobs", j.ID); err != nil {
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
	switch err := c.get(ctx, left, &conf, "jobs", j.ID, "checkpoints", "config"); {
	case err == nil:
		j.IntervalMs, j.CheckpointTimeoutMs = conf.Interval, conf.Timeout
	case errors.Is(err, errBudget):
		return err
	}
	var st statsJSON
	if err := c.get(ctx, left, &st, "jobs", j.ID, "checkpoints"); err != nil {
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

// statsJSON is what txnscope reads of /jobs/:id/checkpoints.
type statsJSON struct {
	Counts struct {
		Completed  int64 `json:"completed"`
		Failed     int64 `json:"failed"`
		InProgress int64 `json:"in_progress"`
	}
	Latest struct {
		Completed *checkpointJSON `json:"completed"`
		Restored  *checkpointJSON `json:"restored"`
	}
	// History is the first maxHistory of Flink's, which lists the newest
	// first.
	History []checkpointJSON
}

// decode reads the answer's object a member at a time, and its history an
// entry at a time: a history of millions of entries costs the time to skip
// them, never their memory. Once counts, latest and maxHistory entries are
// in, the rest is not read at all (Flink writes the history last).
func (st *statsJSON) decode(dec *json.Decoder) error {
	if t, err := dec.Token(); err != nil || t == nil {
		return err // null: nothing said
	} else if t != json.Delim('{') {
		return fmt.Errorf("%v where an object belongs", t)
	}
	var counts, latest bool
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		switch key {
		case "counts":
			counts, err = true, dec.Decode(&st.Counts)
		case "latest":
			latest, err = true, dec.Decode(&st.Latest)
		case "history":
			var enough bool
			if enough, err = st.decodeHistory(dec, counts && latest); enough {
				return err
			}
		default:
			err = dec.Decode(new(skip))
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// decodeHistory reads the history's first maxHistory entries, and skips
// the others, unless stop: then it stops reading there (enough).
func (st *statsJSON) decodeHistory(dec *json.Decoder, stop bool) (enough bool, err error) {
	st.History = st.History[:0]
	if t, err := dec.Token(); err != nil || t == nil {
		return false, err
	} else if t != json.Delim('[') {
		return false, fmt.Errorf("history: %v where a list belongs", t)
	}
	for dec.More() {
		if len(st.History) < maxHistory {
			var c checkpointJSON
			if err := dec.Decode(&c); err != nil {
				return false, err
			}
			st.History = append(st.History, c)
			continue
		}
		if stop {
			return true, nil
		}
		if err := dec.Decode(new(skip)); err != nil {
			return false, err
		}
	}
	_, err = dec.Token()
	return false, err
}

// skip takes any JSON value and keeps nothing of it.
type skip struct{}

func (*skip) UnmarshalJSON([]byte) error { return nil }

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

// streamed is an answer decoded as it arrives, a part at a time, rather
// than read whole first.
type streamed interface {
	decode(*json.Decoder) error
}

// get reads the JSON answer at the API path elem (joined to the base's
// path) into v. left is what the read's answers may still take (maxRead).
func (c *Client) get(ctx context.Context, left *atomic.Int64, v any, elem ...string) error {
	path := "/" + strings.Join(elem, "/") // what messages say: the API's path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.JoinPath(elem...).String(), nil)
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
	body := &answer{r: resp.Body, left: left}
	defer func() {
		// What little may follow the JSON (a newline, an error page) is
		// read so that the connection serves the next request; more is
		// dropped with the connection.
		_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
		resp.Body.Close()
	}()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if s, ok := v.(streamed); ok {
		err = s.decode(json.NewDecoder(body))
	} else {
		// Read whole before it is parsed: a JobManager's answer past
		// maxBody is refused at the speed of the network, not the parser.
		var b []byte
		if b, err = io.ReadAll(body); err == nil {
			err = json.Unmarshal(b, v)
		}
	}
	if err != nil {
		if body.err != nil && body.err != io.EOF {
			return fmt.Errorf("GET %s: %w", path, body.err) // why it was cut short, not the JSON it cut
		}
		return fmt.Errorf("GET %s: not Flink's JSON: %w", path, err)
	}
	return nil
}

// answer is an answer's body, cut at maxBody and once the read's answers
// pass maxRead.
type answer struct {
	r    io.Reader
	n    int64
	left *atomic.Int64
	err  error // the first error of r or of the limits, returned from then on
}

// Read gives no byte past a limit: a JSON value that ends past it is cut,
// whatever else came with the bytes that passed it.
func (a *answer) Read(p []byte) (int, error) {
	if a.err != nil {
		return 0, a.err
	}
	n, err := a.r.Read(p)
	if over := a.n + int64(n) - maxBody; over > 0 {
		n, err = n-int(over), errTooBig
	}
	a.n += int64(n)
	if left := a.left.Add(-int64(n)); left < 0 {
		n, err = max(0, n+int(left)), errBudget
	}
	a.err = err
	return n, err
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
	Prefixes map[string]string          // Flink job name or id → prefix
	Retained map[string]ckptstore.Store // prefix → its job's checkpoint location
	// S3 reads the s3:// checkpoints a JobManager or History Server names.
	S3 ckptstore.S3Options
}

// Read reads every JobManager (each within timeout) and every retained
// directory once.
func Read(ctx context.Context, src Sources, timeout time.Duration) *model.FlinkView {
	jobs, errs := Poll(ctx, src.Clients, timeout)
	v := &model.FlinkView{Jobs: jobs, Errs: errs, At: time.Now(), Prefixes: src.Prefixes}
	for _, c := range src.Clients {
		v.Sources = append(v.Sources, c.shown)
	}
	v.External = readExternal(ctx, src, jobs, timeout)
	for prefix, st := range src.Retained {
		if v.Retained == nil {
			v.Retained = map[string]model.RetainedDir{}
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		v.Retained[prefix] = ReadLocation(ctx, st, prefix)
		cancel()
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
