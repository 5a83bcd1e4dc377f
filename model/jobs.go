package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Family is the kind of producer a transactional id's name says it comes
// from.
type Family string

const (
	// FlinkSink: Flink's KafkaSink, <prefix>-<subtask>-<checkpoint>.
	FlinkSink Family = "flink"
	// StreamsApp: Kafka Streams, <application.id>-<processId>-<thread>
	// (exactly_once_v2) or <application.id>-<subtopology>_<partition>
	// (the older exactly_once).
	StreamsApp Family = "streams"
	// OtherFamily: any other name; its ids are one job together.
	OtherFamily Family = "other"
)

// JobID names a job: a family and, but for OtherFamily, the name its ids
// share (the Flink prefix, the Streams application.id).
type JobID struct {
	Family Family
	Name   string
}

// Member is where an id sits in its job: the Flink subtask and checkpoint,
// the Streams task or thread as Unit (Checkpoint -1).
type Member struct {
	Job        JobID
	Unit       string
	Subtask    int // Flink only, -1 otherwise
	Checkpoint int64
}

// JobOf reads the job an id belongs to from its name. Streams' process ids
// are UUIDs, whose last group may be all digits: they are tried first, or a
// Streams id would pass for a Flink one.
func JobOf(id string) Member {
	if app, unit, ok := streamsV2(id); ok {
		return Member{Job: JobID{StreamsApp, app}, Unit: unit, Subtask: -1, Checkpoint: -1}
	}
	if app, task, ok := streamsTask(id); ok {
		return Member{Job: JobID{StreamsApp, app}, Unit: task, Subtask: -1, Checkpoint: -1}
	}
	if f, ok := ParseFlinkID(id); ok {
		return Member{Job: JobID{FlinkSink, f.Prefix}, Unit: strconv.Itoa(f.Subtask), Subtask: f.Subtask, Checkpoint: f.Checkpoint}
	}
	return Member{Job: JobID{Family: OtherFamily}, Subtask: -1, Checkpoint: -1}
}

// streamsV2 splits <app>-<8-4-4-4-12 hex uuid>-<thread>.
func streamsV2(id string) (app, unit string, ok bool) {
	last := strings.LastIndexByte(id, '-')
	if last <= 0 || !digits(id[last+1:]) {
		return "", "", false
	}
	const uuidLen = 36
	start := last - uuidLen
	if start < 2 || id[start-1] != '-' || !isUUID(id[start:last]) {
		return "", "", false
	}
	return id[:start-1], id[start:], true
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return false
			}
		}
	}
	return true
}

// streamsTask splits <app>-<subtopology>_<partition>.
func streamsTask(id string) (app, task string, ok bool) {
	last := strings.LastIndexByte(id, '-')
	if last <= 0 {
		return "", "", false
	}
	sub, part, found := strings.Cut(id[last+1:], "_")
	if !found || !digits(sub) || !digits(part) {
		return "", "", false
	}
	return id[:last], id[last+1:], true
}

// Job is what the ids of one job say together.
type Job struct {
	ID    JobID
	IDs   int
	Units []Unit // by subtask (Flink), or by task or thread name
	// Open are the job's open transactions; Lingering those of them open
	// on a checkpoint older than the newest committed one of their subtask:
	// what a crashed attempt left behind (Flink only).
	Open, Lingering []string
	// Oldest is the oldest open transaction (zero when none).
	Oldest Txn
	// NewestCheckpoint and NewestCommitted are over all subtasks (-1: none).
	NewestCheckpoint, NewestCommitted int64
	// LastCommit is the last commit History saw of any of the job's ids.
	LastCommit time.Time
	// Commits5m, Aborts5m: the outcomes of the last 5 minutes.
	Commits5m, Aborts5m int
	// MinTimeoutMs and MaxTimeoutMs span the described ids' timeouts (0:
	// none described).
	MinTimeoutMs, MaxTimeoutMs int32
	// Shared: History saw the job's prefix taken over by two jobs
	// (Collision), with Takeovers such takeovers in the window.
	Shared    bool
	Takeovers int
}

// Unit is one subtask of a Flink job, or one task or thread of a Streams
// application.
type Unit struct {
	Name             string
	Subtask          int
	IDs              int
	NewestCheckpoint int64
	NewestCommitted  int64
	LastCommit       time.Time
	Open, Lingering  []string
}

// Jobs groups s's ids into jobs, most urgent first: lingering
// transactions, then the oldest open transaction's share of its timeout,
// then the name. h may be nil.
func Jobs(s *Snapshot, h *History, now time.Time) []Job {
	type acc struct {
		job   Job
		units map[string]*Unit
	}
	byJob := map[JobID]*acc{}
	for i := range s.Txns {
		t := &s.Txns[i]
		m := JobOf(t.ID)
		a := byJob[m.Job]
		if a == nil {
			a = &acc{job: Job{ID: m.Job, NewestCheckpoint: -1, NewestCommitted: -1}, units: map[string]*Unit{}}
			byJob[m.Job] = a
		}
		st := h.Stats(t.ID)
		committed := t.State == CompleteCommit || st.Last == Committed
		j := &a.job
		j.IDs++
		if st.Last == Committed && st.LastAt.After(j.LastCommit) {
			j.LastCommit = st.LastAt
		}
		w := st.Window(now)
		j.Commits5m += w.Commits5m
		j.Aborts5m += w.Aborts5m
		if t.TimeoutMs > 0 {
			if j.MinTimeoutMs == 0 || t.TimeoutMs < j.MinTimeoutMs {
				j.MinTimeoutMs = t.TimeoutMs
			}
			j.MaxTimeoutMs = max(j.MaxTimeoutMs, t.TimeoutMs)
		}
		if !j.Shared && len(st.PrefixTakeovers) > 0 {
			j.Takeovers, j.Shared = Collision(st.PrefixTakeovers, now)
		}
		if t.State.Open() {
			j.Open = append(j.Open, t.ID)
			if j.Oldest.ID == "" || t.StartUnixMs < j.Oldest.StartUnixMs {
				j.Oldest = *t
			}
		}
		if m.Unit == "" {
			continue
		}
		u := a.units[m.Unit]
		if u == nil {
			u = &Unit{Name: m.Unit, Subtask: m.Subtask, NewestCheckpoint: -1, NewestCommitted: -1}
			a.units[m.Unit] = u
		}
		u.IDs++
		u.NewestCheckpoint = max(u.NewestCheckpoint, m.Checkpoint)
		if committed {
			u.NewestCommitted = max(u.NewestCommitted, m.Checkpoint)
		}
		if st.Last == Committed && st.LastAt.After(u.LastCommit) {
			u.LastCommit = st.LastAt
		}
		if t.State.Open() {
			u.Open = append(u.Open, t.ID)
		}
	}
	out := make([]Job, 0, len(byJob))
	for _, a := range byJob {
		j := a.job
		for _, u := range a.units {
			if j.ID.Family == FlinkSink {
				for _, id := range u.Open {
					if JobOf(id).Checkpoint < u.NewestCommitted {
						u.Lingering = append(u.Lingering, id)
					}
				}
				slices.Sort(u.Lingering)
				j.Lingering = append(j.Lingering, u.Lingering...)
			}
			slices.Sort(u.Open)
			j.NewestCheckpoint = max(j.NewestCheckpoint, u.NewestCheckpoint)
			j.NewestCommitted = max(j.NewestCommitted, u.NewestCommitted)
			j.Units = append(j.Units, *u)
		}
		slices.SortFunc(j.Units, func(a, b Unit) int {
			return cmp.Or(cmp.Compare(a.Subtask, b.Subtask), strings.Compare(a.Name, b.Name))
		})
		slices.Sort(j.Open)
		slices.Sort(j.Lingering)
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b Job) int {
		if c := cmp.Compare(len(b.Lingering), len(a.Lingering)); c != 0 {
			return c
		}
		ra, _ := a.Oldest.Ratio(now)
		rb, _ := b.Oldest.Ratio(now)
		if c := cmp.Compare(rb, ra); c != 0 {
			return c
		}
		return cmp.Or(strings.Compare(string(a.ID.Family), string(b.ID.Family)), strings.Compare(a.ID.Name, b.ID.Name))
	})
	return out
}

// behindBy is how many checkpoints a subtask's newest commit may trail the
// job's before it is "behind": one is the checkpoint committing right now.
const behindBy = 2

// Problems says what is wrong with the job, each with why, most urgent
// first: lingering transactions, a subtask behind, no commit for too long,
// a shared prefix, timeouts against the checkpoint interval (q) and the
// brokers' maximum (s).
func (j Job) Problems(s *Snapshot, q Query, now time.Time) []string {
	var out []string
	if n := len(j.Lingering); n > 0 {
		out = append(out, fmt.Sprintf("%d lingering after a restart: open on a checkpoint older than the newest committed", n))
	}
	if j.ID.Family == FlinkSink {
		for _, u := range j.Units {
			if u.NewestCommitted >= 0 && j.NewestCommitted-u.NewestCommitted >= behindBy {
				out = append(out, fmt.Sprintf("subtask %d behind: committed checkpoint %d, the job %d", u.Subtask, u.NewestCommitted, j.NewestCommitted))
			}
		}
	}
	if q.CheckpointInterval > 0 && len(j.Open) > 0 && !j.LastCommit.IsZero() && now.Sub(j.LastCommit) > 2*q.CheckpointInterval {
		out = append(out, fmt.Sprintf("not committing: no commit for %s (checkpoint interval %s)", now.Sub(j.LastCommit).Round(time.Second), q.CheckpointInterval))
	}
	if j.Shared {
		out = append(out, fmt.Sprintf("prefix %s looks shared by two jobs (%d takeovers)", j.ID.Name, j.Takeovers))
	}
	if q.CheckpointInterval > 0 && j.MinTimeoutMs > 0 && time.Duration(j.MinTimeoutMs)*time.Millisecond < 2*q.CheckpointInterval {
		out = append(out, "timeout below 2× the checkpoint interval")
	}
	if s != nil && s.BrokerMaxTimeoutMs > 0 && int64(j.MaxTimeoutMs) > s.BrokerMaxTimeoutMs {
		out = append(out, "timeout above the broker's transaction.max.timeout.ms")
	}
	return out
}
