package audit

import (
	"fmt"
	"os"
	"time"

	"github.com/txnscope/txnscope/internal/jsonout"
	"github.com/txnscope/txnscope/model"
)

// Entry is one line of the audit log. Both phases carry the whole target, so
// a grep for an id or a partition finds every line of its attempts.
type Entry struct {
	Time    time.Time `json:"time"`
	Attempt string    `json:"attempt"`
	// Phase is "attempt" (written before request number Try goes out) or
	// "result" (after the last answer, or after a refusal that sent nothing).
	Phase     string `json:"phase"`
	Try       int    `json:"try,omitempty"`
	Sends     *int   `json:"sends,omitempty"`
	User      string `json:"user"`
	PID       int    `json:"pid"`
	Bootstrap string `json:"bootstrap"`
	// Context is the config file's context the request was sent in.
	Context string `json:"context,omitempty"`
	Action  string `json:"action"`
	Target  string `json:"target"`
	// TargetBase64 and TransactionalIDBase64 are the exact bytes of an id
	// that is not UTF-8 (jsonout.Base64): encoding/json writes its bad bytes
	// as U+FFFD, and two ids could read the same.
	TargetBase64 string `json:"target_base64,omitempty"`

	// What tells the transaction from any other (model.Action).
	TransactionalID       string                 `json:"transactional_id,omitempty"`
	TransactionalIDBase64 string                 `json:"transactional_id_base64,omitempty"`
	State                 string                 `json:"state,omitempty"`
	TxnStart              string                 `json:"txn_start,omitempty"`
	Partitions            []model.TopicPartition `json:"partitions,omitempty"`
	CoordinatorEpoch      *int32                 `json:"coordinator_epoch,omitempty"`
	StartOffset           *int64                 `json:"start_offset,omitempty"`
	IdleRule              string                 `json:"idle_rule,omitempty"`
	ProducerID            int64                  `json:"producer_id"`
	ProducerEpoch         int16                  `json:"producer_epoch"`
	Wire                  string                 `json:"request"`

	// What a commit (or a resolve's force-terminate) rests on: the verdict
	// read again just before the request (EvidenceReadAt: when), or the
	// one confirmed on a line written before any re-check; or the
	// operator's word. The Flink job (name and id) and the job's
	// checkpoint directory it was read from are named.
	Verdict        string     `json:"verdict,omitempty"`
	CompletedIn    int64      `json:"completed_in,omitempty"`
	Evidence       string     `json:"evidence,omitempty"`
	EvidenceReadAt *time.Time `json:"evidence_read_at,omitempty"`
	FlinkJob       string     `json:"flink_job,omitempty"`
	FlinkJobID     string     `json:"flink_job_id,omitempty"`
	FlinkState     string     `json:"flink_state,omitempty"`
	JobManager     string     `json:"job_manager,omitempty"`
	CheckpointDir  string     `json:"checkpoint_dir,omitempty"`
	Committable    string     `json:"committable,omitempty"`
	Unverified     bool       `json:"unverified,omitempty"`

	Outcome   string `json:"outcome,omitempty"` // sent, refused, unknown, failed
	Result    string `json:"result,omitempty"`
	ErrorCode string `json:"error_code,omitempty"`
}

func (at *Attempt) entry(phase string, t time.Time) Entry {
	a := at.action
	e := Entry{
		Time: t.UTC(), Attempt: at.id, Phase: phase, User: osUser(), PID: os.Getpid(), Bootstrap: at.bootstrap, Context: at.context,
		Action: string(a.Kind), Target: a.Target(), TargetBase64: jsonout.Base64(a.Target()), ProducerID: a.ProducerID, ProducerEpoch: a.ProducerEpoch, Wire: a.Wire(),
	}
	if a.Kind == model.ForceTerminate || a.Kind == model.Commit {
		e.TransactionalID, e.TransactionalIDBase64, e.State, e.Partitions = a.TransactionalID, jsonout.Base64(a.TransactionalID), a.State.String(), a.Partitions
		if !a.Start.IsZero() {
			e.TxnStart = a.Start.UTC().Format(time.RFC3339Nano)
		}
		if a.Kind == model.Commit || a.Verdict.Kind != "" {
			v, b := a.Verdict, a.Verdict.Basis
			e.Verdict, e.CompletedIn, e.Evidence, e.Unverified = string(v.Kind), v.CompletedIn, v.Evidence, a.Unverified
			e.FlinkJob, e.FlinkJobID, e.FlinkState, e.JobManager, e.CheckpointDir = b.FlinkJobName, b.FlinkJobID, b.FlinkState, b.FlinkURL, b.Dir
			if b.Committable != nil {
				e.Committable = b.Committable.String()
			}
			if !at.evidenceAt.IsZero() {
				t := at.evidenceAt.UTC()
				e.EvidenceReadAt = &t
			}
		}
		return e
	}
	ce, so := a.CoordinatorEpoch, a.StartOffset
	e.CoordinatorEpoch, e.StartOffset = &ce, &so
	e.IdleRule = "waived by the operator"
	if !a.IdleWaived {
		e.IdleRule = fmt.Sprintf("idle over %s", a.MinIdle)
	}
	return e
}
