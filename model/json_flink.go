package model

import "time"

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
	// it answered.
	FlinkSourcesJSON struct {
		ReadAt      time.Time             `json:"read_at"`
		JobManagers []FlinkJobManagerJSON `json:"job_managers"`
	}
	FlinkJobManagerJSON struct {
		URL   string  `json:"url"`
		Error *string `json:"error"`
		Jobs  int     `json:"jobs"`
	}
)

// ExportFlink is m as JSON (nil when m is).
func ExportFlink(m *FlinkMatch) *FlinkJSON {
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

func exportCheckpoint(c *FlinkCheckpoint) *FlinkCheckpointJSON {
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
func ExportFlinkSources(v *FlinkView) *FlinkSourcesJSON {
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
	return out
}
