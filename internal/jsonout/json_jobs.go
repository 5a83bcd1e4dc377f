package jsonout

import (
	"time"

	"github.com/txnscope/txnscope/model"
)

// SchemaVersion is the snapshot -o json document's version: 2 added jobs,
// pinned_partitions, stuck_groups and hanging.
const SchemaVersion = 2

type (
	// JobJSON is one job (Jobs): a Flink sink's prefix, a Kafka Streams
	// application, or the ids of no recognisable family. Each *Base64 field
	// is the exact form of the field before it, there only when that is not
	// UTF-8 (Base64, Base64List).
	JobJSON struct {
		Family     model.Family `json:"family"`
		Name       string       `json:"name"`
		NameBase64 string       `json:"name_base64,omitempty"`
		IDs        int          `json:"ids"`
		// Tasks is Job.Tasks; Naming "pooling" or "incrementing" for a
		// Flink sink (Job.Pooling), null otherwise.
		Tasks            int       `json:"tasks"`
		Naming           *string   `json:"naming"`
		NewestCheckpoint *int64    `json:"newest_checkpoint"`
		NewestCommitted  *int64    `json:"newest_committed"`
		Open             []string  `json:"open"`
		OpenBase64       []*string `json:"open_base64,omitempty"`
		Lingering        []string  `json:"lingering"`
		LingeringBase64  []*string `json:"lingering_base64,omitempty"`
		// Orphaned are open transactions no running subtask will end
		// (FLINK-40626: a rescale or a prefix change), lingering ones left out.
		Orphaned       []string  `json:"orphaned"`
		OrphanedBase64 []*string `json:"orphaned_base64,omitempty"`
		// LingeringFirstTimeout and LingeringLastTimeout are when the
		// coordinator aborts the first and the last lingering transaction
		// (null: none lingers, or a timeout is not known).
		LingeringFirstTimeout *time.Time `json:"lingering_first_timeout"`
		LingeringLastTimeout  *time.Time `json:"lingering_last_timeout"`
		// OldestOpen is the oldest open transaction's id, its age and share
		// of its timeout (null when none is open).
		OldestOpen       *string    `json:"oldest_open"`
		OldestOpenBase64 string     `json:"oldest_open_base64,omitempty"`
		OldestAgeMs      *int64     `json:"oldest_age_ms"`
		OldestRatio      *float64   `json:"oldest_timeout_ratio"`
		LastCommit       *time.Time `json:"last_commit"`
		// SlowestSubtask is the subtask whose last commit is the oldest (null:
		// no commit seen), SlowestLastCommit that commit.
		SlowestSubtask       *string    `json:"slowest_subtask"`
		SlowestSubtaskBase64 string     `json:"slowest_subtask_base64,omitempty"`
		SlowestLastCommit    *time.Time `json:"slowest_last_commit"`
		// CommitCadenceMs is Job.Cadence (null: not known).
		CommitCadenceMs *int64 `json:"commit_cadence_ms"`
		Commits5m       int    `json:"commits_5m"`
		Aborts5m        int    `json:"aborts_5m"`
		Fences5m        int    `json:"fences_5m"`
		Timeouts5m      int    `json:"timeouts_5m"`
		PrefixShared    bool   `json:"prefix_shared"`
		// Pinned are the partitions the job's open transactions pin;
		// StuckGroups the groups waiting at them.
		Pinned            []JobPinJSON  `json:"pinned"`
		StuckGroups       []string      `json:"stuck_groups"`
		StuckGroupsBase64 []*string     `json:"stuck_groups_base64,omitempty"`
		Subtasks          []SubtaskJSON `json:"subtasks"`
		Problems          []ProblemJSON `json:"problems"`
		// Epoch is the job's id whose producer id rotates first (null:
		// none described).
		Epoch *EpochJSON `json:"epoch"`
		// Flink is the Flink job the prefix matched (null: no --flink, or
		// none matched).
		Flink *FlinkJSON `json:"flink"`
		// Verdicts say of each open transaction whether its checkpoint
		// completed (absent without --flink or --flink-checkpoints).
		Verdicts []VerdictJSON `json:"verdicts,omitempty"`
	}
	// VerdictJSON is one open transaction's commit-or-abort verdict
	// (Verdict): checkpointed, not_checkpointed or unknown, and why.
	VerdictJSON struct {
		TransactionalID string            `json:"transactional_id"`
		Verdict         model.VerdictKind `json:"verdict"`
		// Exact: read from a completed checkpoint's committables, not
		// inferred.
		Exact      bool   `json:"exact"`
		Checkpoint *int64 `json:"checkpoint"`
		// CompletedIn is the completed checkpoint whose state holds it
		// (null unless checkpointed): restoring from it commits it.
		CompletedIn *int64 `json:"completed_in"`
		Evidence    string `json:"evidence"`
		// RestsOn names the Flink job and the checkpoint directory it
		// rests on.
		RestsOn BasisJSON `json:"rests_on"`
	}
	// JobPinJSON is a partition whose LSO the job's open transaction
	// transactional_id holds, and the groups stuck there.
	JobPinJSON struct {
		Topic                 string    `json:"topic"`
		Partition             int32     `json:"partition"`
		TransactionalID       string    `json:"transactional_id"`
		TransactionalIDBase64 string    `json:"transactional_id_base64,omitempty"`
		StuckGroups           []string  `json:"stuck_groups"`
		StuckGroupsBase64     []*string `json:"stuck_groups_base64,omitempty"`
	}
	// EpochJSON is Job.Epoch: the producer epoch against the rotation at
	// 32766 under transaction version 2 (model.EpochOutlook).
	EpochJSON struct {
		TransactionalID       string `json:"transactional_id"`
		TransactionalIDBase64 string `json:"transactional_id_base64,omitempty"`
		ProducerID            int64  `json:"producer_id"`
		ProducerEpoch         int16  `json:"producer_epoch"`
		// Left is how many transactions end before the rotation.
		Left int `json:"transactions_left"`
		// PerHour and RotatesAt: the epoch's recent rise and when the
		// producer id rotates at it (null: not known).
		PerHour   *float64   `json:"epochs_per_hour"`
		RotatesAt *time.Time `json:"rotates_at"`
		Warning   bool       `json:"warning"`
	}
	// ProblemJSON is one of a job's problems (Problem).
	ProblemJSON struct {
		Kind   model.ProblemKind `json:"kind"`
		What   string            `json:"what"`
		Why    string            `json:"why"`
		WayOut string            `json:"way_out"`
	}
	// SubtaskJSON is a Flink subtask, or a Streams task or thread (Subtask
	// null).
	SubtaskJSON struct {
		Name             string     `json:"name"`
		NameBase64       string     `json:"name_base64,omitempty"`
		Subtask          *int       `json:"subtask"`
		IDs              int        `json:"ids"`
		NewestCheckpoint *int64     `json:"newest_checkpoint"`
		NewestCommitted  *int64     `json:"newest_committed"`
		LastCommit       *time.Time `json:"last_commit"`
		Behind           bool       `json:"behind"`
		// Probe and Retired are Unit.Probe and Unit.Retired: not a subtask
		// that runs now.
		Probe           bool      `json:"probe"`
		Retired         bool      `json:"retired"`
		Open            []string  `json:"open"`
		OpenBase64      []*string `json:"open_base64,omitempty"`
		Lingering       []string  `json:"lingering"`
		LingeringBase64 []*string `json:"lingering_base64,omitempty"`
	}
)

// ExportJobs is s's jobs as JSON, most urgent first.
func ExportJobs(s *model.Snapshot, h *model.History, q model.Query, now time.Time) []JobJSON {
	jobs := model.JobsWith(s, h, now, q.Flink)
	out := make([]JobJSON, 0, len(jobs))
	for _, j := range jobs {
		o := JobJSON{Family: j.ID.Family, Name: j.ID.Name, NameBase64: Base64(j.ID.Name), IDs: j.IDs, NewestCheckpoint: nonNeg(j.NewestCheckpoint),
			NewestCommitted: nonNeg(j.NewestCommitted), Open: orEmpty(j.Open), OpenBase64: Base64List(j.Open),
			Lingering: orEmpty(j.Lingering), LingeringBase64: Base64List(j.Lingering), Orphaned: orEmpty(j.Orphaned), OrphanedBase64: Base64List(j.Orphaned),
			LingeringFirstTimeout: timeOrNil(j.LingeringFrom), LingeringLastTimeout: timeOrNil(j.LingeringUntil),
			LastCommit: timeOrNil(j.LastCommit), SlowestLastCommit: timeOrNil(j.SlowestCommit),
			Commits5m: j.Commits5m, Aborts5m: j.Aborts5m, Fences5m: j.Fences5m, Timeouts5m: j.Timeouts5m, PrefixShared: j.Shared, Tasks: j.Tasks,
			Pinned: make([]JobPinJSON, 0, len(j.Pinned)), StuckGroups: orEmpty(j.StuckGroups), StuckGroupsBase64: Base64List(j.StuckGroups),
			Subtasks: make([]SubtaskJSON, 0, len(j.Units)), Problems: []ProblemJSON{}, Flink: ExportFlink(j.Flink)}
		for _, v := range j.OpenVerdicts {
			o.Verdicts = append(o.Verdicts, VerdictJSON{TransactionalID: v.ID, Verdict: v.Kind, Exact: v.Exact, Checkpoint: positive(v.Checkpoint), CompletedIn: positive(v.CompletedIn), Evidence: v.Evidence,
				RestsOn: ExportBasis(v.Basis)})
		}
		if j.ID.Family == model.FlinkSink {
			naming := "incrementing"
			if j.Pooling {
				// Slots, not checkpoints: no number to report.
				naming, o.NewestCheckpoint, o.NewestCommitted = "pooling", nil, nil
			}
			o.Naming = &naming
		}
		if j.SlowestUnit != "" {
			name := j.SlowestUnit
			o.SlowestSubtask, o.SlowestSubtaskBase64 = &name, Base64(name)
		}
		if j.Cadence > 0 {
			c := j.Cadence.Milliseconds()
			o.CommitCadenceMs = &c
		}
		if j.Oldest.ID != "" {
			id := j.Oldest.ID
			o.OldestOpen, o.OldestOpenBase64 = &id, Base64(id)
			if a, ok := j.Oldest.Age(now); ok {
				ms := a.Milliseconds()
				o.OldestAgeMs = &ms
			}
			if r, ok := j.Oldest.Ratio(now); ok {
				o.OldestRatio = &r
			}
		}
		for _, p := range j.Pinned {
			o.Pinned = append(o.Pinned, JobPinJSON{Topic: p.Topic, Partition: p.Partition, TransactionalID: p.ID, TransactionalIDBase64: Base64(p.ID),
				StuckGroups: orEmpty(p.Groups), StuckGroupsBase64: Base64List(p.Groups)})
		}
		if e := j.Epoch; e.ID != "" {
			o.Epoch = &EpochJSON{TransactionalID: e.ID, TransactionalIDBase64: Base64(e.ID), ProducerID: e.ProducerID, ProducerEpoch: e.Epoch,
				Left: e.Left(), RotatesAt: timeOrNil(e.Rotates), Warning: j.ID.Family == model.FlinkSink && e.Warn(now)}
			if e.PerHour > 0 {
				v := e.PerHour
				o.Epoch.PerHour = &v
			}
		}
		for _, p := range j.Problems(s, q, now) {
			o.Problems = append(o.Problems, ProblemJSON(p))
		}
		for _, u := range j.Units {
			su := SubtaskJSON{Name: u.Name, NameBase64: Base64(u.Name), IDs: u.IDs, NewestCheckpoint: nonNeg(u.NewestCheckpoint),
				NewestCommitted: nonNeg(u.NewestCommitted), LastCommit: timeOrNil(u.LastCommit), Behind: u.Behind, Probe: u.Probe, Retired: u.Retired,
				Open: orEmpty(u.Open), OpenBase64: Base64List(u.Open), Lingering: orEmpty(u.Lingering), LingeringBase64: Base64List(u.Lingering)}
			if j.Pooling {
				su.NewestCheckpoint, su.NewestCommitted = nil, nil
			}
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

// positive is v, or null when it is not above 0 (not known).
func positive(v int64) *int64 {
	if v <= 0 {
		return nil
	}
	return &v
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
