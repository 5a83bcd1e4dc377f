package jsonout

import (
	"github.com/txnscope/txnscope/model"

	"maps"
	"slices"
	"time"
)

type (
	// FlinkJSON is the Flink job a Flink sink's prefix matched (JobJSON's
	// flink): what its JobManager's REST API said of it.
	FlinkJSON struct {
		Source string `json:"source"`
		JobID  string `json:"job_id"`
		Name   string `json:"name"`
		// MatchedBy is "--flink-prefix" or "name" (FlinkMatch.By).
		MatchedBy            string               `json:"matched_by"`
		State                string               `json:"state"`
		SinkParallelism      *int                 `json:"sink_parallelism"`
		CheckpointIntervalMs *int64               `json:"checkpoint_interval_ms"`
		CheckpointTimeoutMs  *int64               `json:"checkpoint_timeout_ms"`
		Completed            int64                `json:"checkpoints_completed"`
		Failed               int64                `json:"checkpoints_failed"`
		InProgress           int64                `json:"checkpoints_in_progress"`
		LatestCompleted      *FlinkCheckpointJSON `json:"latest_completed"`
		Restored             *FlinkCheckpointJSON `json:"restored"`
		// Error is what went wrong reading the job's details ("" when
		// nothing).
		Error string `json:"error,omitempty"`
	}
	// FlinkCheckpointJSON is one checkpoint: when it was triggered and when
	// its last acknowledgement came (about when it completed), or when a
	// run restored it; times are the JobManager's clock.
	FlinkCheckpointJSON struct {
		ID            int64      `json:"id"`
		TriggerTime   *time.Time `json:"trigger_time"`
		CompletedTime *time.Time `json:"completed_time"`
		RestoreTime   *time.Time `json:"restore_time"`
		Path          string     `json:"path"`
	}
	// FlinkSourcesJSON is each JobManager given with --flink, and whether
	// it answered; each checkpoint directory given with
	// --flink-checkpoints, and what was found in it.
	FlinkSourcesJSON struct {
		ReadAt         time.Time             `json:"read_at"`
		JobManagers    []FlinkJobManagerJSON `json:"job_managers"`
		CheckpointDirs []CheckpointDirJSON   `json:"checkpoint_dirs"`
	}
	// CheckpointDirJSON is one --flink-checkpoints PREFIX=DIR as read:
	// the directory's error, the entries of it that could not be read,
	// and each job's directory in it.
	CheckpointDirJSON struct {
		Prefix   string              `json:"prefix"`
		Dir      string              `json:"dir"`
		Error    *string             `json:"error"`
		Problems []string            `json:"problems"`
		Jobs     []CheckpointJobJSON `json:"jobs"`
	}
	// CheckpointJobJSON is one job's checkpoint directory: its completed
	// checkpoints, the committables of the prefix each holds, and the
	// entries that could not be read or understood.
	CheckpointJobJSON struct {
		Dir         string                   `json:"dir"`
		JobID       *string                  `json:"job_id"`
		Checkpoints []RetainedCheckpointJSON `json:"checkpoints"`
		Problems    []string                 `json:"problems"`
	}
	RetainedCheckpointJSON struct {
		ID           int64             `json:"id"`
		Committables []CommittableJSON `json:"committables"`
	}
	// CommittableJSON is a KafkaSink committable: what Flink commits on
	// restore.
	CommittableJSON struct {
		TransactionalID string `json:"transactional_id"`
		ProducerID      int64  `json:"producer_id"`
		Epoch           int16  `json:"epoch"`
		// Checkpoint pre-committed it (null: not known).
		Checkpoint *int64 `json:"checkpoint"`
	}
	// BasisJSON is what a verdict rests on (Basis): the Flink job a
	// JobManager listed for the prefix (null: none), the JobManagers
	// asked, the job's checkpoint directory read (null: none) and the
	// transaction's committable found there (null: none).
	BasisJSON struct {
		FlinkJob      *FlinkJobRefJSON `json:"flink_job"`
		JobManagers   []string         `json:"job_managers"`
		CheckpointDir *string          `json:"checkpoint_dir"`
		Committable   *CommittableJSON `json:"committable"`
	}
	FlinkJobRefJSON struct {
		JobManager string `json:"job_manager"`
		JobID      string `json:"job_id"`
		Name       string `json:"name"`
		State      string `json:"state"`
	}
	FlinkJobManagerJSON struct {
		URL   string  `json:"url"`
		Error *string `json:"error"`
		Jobs  int     `json:"jobs"`
	}
)

// ExportFlink is m as JSON (nil when m is).
func ExportFlink(m *model.FlinkMatch) *FlinkJSON {
	if m == nil {
		return nil
	}
	j := m.Job
	out := &FlinkJSON{Source: j.Source, JobID: j.ID, Name: j.Name, MatchedBy: m.By, State: j.State,
		Completed: j.Completed, Failed: j.Failed, InProgress: j.InProgress,
		LatestCompleted: exportCheckpoint(j.Latest), Restored: exportCheckpoint(j.Restored), Error: j.Err}
	if p := j.SinkParallelism(); p > 0 {
		out.SinkParallelism = &p
	}
	if d := j.Interval(); d > 0 {
		v := d.Milliseconds()
		out.CheckpointIntervalMs = &v
	}
	if j.CheckpointTimeoutMs > 0 {
		v := j.CheckpointTimeoutMs
		out.CheckpointTimeoutMs = &v
	}
	return out
}

func exportCheckpoint(c *model.FlinkCheckpoint) *FlinkCheckpointJSON {
	if c == nil {
		return nil
	}
	ms := func(v int64) *time.Time {
		if v <= 0 {
			return nil
		}
		t := time.UnixMilli(v).UTC()
		return &t
	}
	return &FlinkCheckpointJSON{ID: c.ID, TriggerTime: ms(c.TriggerMs), CompletedTime: ms(c.AckMs), RestoreTime: ms(c.RestoreMs), Path: c.Path}
}

// ExportFlinkSources is v's JobManagers as JSON (nil when v is).
func ExportFlinkSources(v *model.FlinkView) *FlinkSourcesJSON {
	if v == nil {
		return nil
	}
	out := &FlinkSourcesJSON{ReadAt: v.At.UTC(), JobManagers: []FlinkJobManagerJSON{}}
	for i, src := range v.Sources {
		jm := FlinkJobManagerJSON{URL: src}
		if i < len(v.Errs) && v.Errs[i] != "" {
			e := v.Errs[i]
			jm.Error = &e
		}
		for _, j := range v.Jobs {
			if j.Source == src {
				jm.Jobs++
			}
		}
		out.JobManagers = append(out.JobManagers, jm)
	}
	out.CheckpointDirs = []CheckpointDirJSON{}
	for _, prefix := range slices.Sorted(maps.Keys(v.Retained)) {
		out.CheckpointDirs = append(out.CheckpointDirs, exportRetained(prefix, v.Retained[prefix]))
	}
	return out
}

func exportRetained(prefix string, r model.RetainedDir) CheckpointDirJSON {
	out := CheckpointDirJSON{Prefix: prefix, Dir: r.Dir, Problems: orEmpty(r.Problems), Jobs: []CheckpointJobJSON{}}
	if r.Err != "" {
		e := r.Err
		out.Error = &e
	}
	for _, j := range r.Jobs {
		jj := CheckpointJobJSON{Dir: j.Dir, Problems: orEmpty(j.Problems), Checkpoints: []RetainedCheckpointJSON{}}
		if j.JobID != "" {
			id := j.JobID
			jj.JobID = &id
		}
		for _, c := range j.Checkpoints {
			cj := RetainedCheckpointJSON{ID: c.N, Committables: []CommittableJSON{}}
			for _, cm := range c.Committables {
				cj.Committables = append(cj.Committables, exportCommittable(cm))
			}
			jj.Checkpoints = append(jj.Checkpoints, cj)
		}
		out.Jobs = append(out.Jobs, jj)
	}
	return out
}

func exportCommittable(c model.Committable) CommittableJSON {
	return CommittableJSON{TransactionalID: c.ID, ProducerID: c.ProducerID, Epoch: c.Epoch, Checkpoint: positive(c.Checkpoint)}
}

// ExportBasis is b as JSON.
func ExportBasis(b model.Basis) BasisJSON {
	out := BasisJSON{JobManagers: orEmpty(b.JobManagers)}
	if b.FlinkJobID != "" {
		out.FlinkJob = &FlinkJobRefJSON{JobManager: b.FlinkURL, JobID: b.FlinkJobID, Name: b.FlinkJobName, State: b.FlinkState}
	}
	if b.Dir != "" {
		d := b.Dir
		out.CheckpointDir = &d
	}
	if b.Committable != nil {
		c := exportCommittable(*b.Committable)
		out.Committable = &c
	}
	return out
}
