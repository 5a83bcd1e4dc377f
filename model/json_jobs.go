package model

import "time"

// SchemaVersion is the snapshot -o json document's version: 2 added jobs,
// pinned_partitions, stuck_groups and hanging.
const SchemaVersion = 2

type (
	// JobJSON is one job (Jobs): a Flink sink's prefix, a Kafka Streams
	// application, or the ids of no recognisable family.
	JobJSON struct {
		Family           Family   `json:"family"`
		Name             string   `json:"name"`
		IDs              int      `json:"ids"`
		NewestCheckpoint *int64   `json:"newest_checkpoint"`
		NewestCommitted  *int64   `json:"newest_committed"`
		Open             []string `json:"open"`
		Lingering        []string `json:"lingering"`
		// OldestOpen is the oldest open transaction's id, its age and share
		// of its timeout (null when none is open).
		OldestOpen   *string       `json:"oldest_open"`
		OldestAgeMs  *int64        `json:"oldest_age_ms"`
		OldestRatio  *float64      `json:"oldest_timeout_ratio"`
		LastCommit   *time.Time    `json:"last_commit"`
		Commits5m    int           `json:"commits_5m"`
		Aborts5m     int           `json:"aborts_5m"`
		PrefixShared bool          `json:"prefix_shared"`
		Subtasks     []SubtaskJSON `json:"subtasks"`
		Problems     []string      `json:"problems"`
	}
	// SubtaskJSON is a Flink subtask, or a Streams task or thread (Subtask
	// null).
	SubtaskJSON struct {
		Name             string     `json:"name"`
		Subtask          *int       `json:"subtask"`
		IDs              int        `json:"ids"`
		NewestCheckpoint *int64     `json:"newest_checkpoint"`
		NewestCommitted  *int64     `json:"newest_committed"`
		LastCommit       *time.Time `json:"last_commit"`
		Open             []string   `json:"open"`
		Lingering        []string   `json:"lingering"`
	}
)

// ExportJobs is s's jobs as JSON, most urgent first.
func ExportJobs(s *Snapshot, h *History, q Query, now time.Time) []JobJSON {
	jobs := Jobs(s, h, now)
	out := make([]JobJSON, 0, len(jobs))
	for _, j := range jobs {
		o := JobJSON{Family: j.ID.Family, Name: j.ID.Name, IDs: j.IDs, NewestCheckpoint: nonNeg(j.NewestCheckpoint),
			NewestCommitted: nonNeg(j.NewestCommitted), Open: orEmpty(j.Open), Lingering: orEmpty(j.Lingering),
			LastCommit: timeOrNil(j.LastCommit), Commits5m: j.Commits5m, Aborts5m: j.Aborts5m, PrefixShared: j.Shared,
			Subtasks: make([]SubtaskJSON, 0, len(j.Units)), Problems: orEmpty(j.Problems(s, q, now))}
		if j.Oldest.ID != "" {
			id := j.Oldest.ID
			o.OldestOpen = &id
			if a, ok := j.Oldest.Age(now); ok {
				ms := a.Milliseconds()
				o.OldestAgeMs = &ms
			}
			if r, ok := j.Oldest.Ratio(now); ok {
				o.OldestRatio = &r
			}
		}
		for _, u := range j.Units {
			su := SubtaskJSON{Name: u.Name, IDs: u.IDs, NewestCheckpoint: nonNeg(u.NewestCheckpoint), NewestCommitted: nonNeg(u.NewestCommitted),
				LastCommit: timeOrNil(u.LastCommit), Open: orEmpty(u.Open), Lingering: orEmpty(u.Lingering)}
			if u.Subtask >= 0 {
				n := u.Subtask
				su.Subtask = &n
			}
			o.Subtasks = append(o.Subtasks, su)
		}
		out = append(out, o)
	}
	return out
}

func nonNeg(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
