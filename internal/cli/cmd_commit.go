package cli

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/txnscope/txnscope/internal/flinkrest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// commit is the commit Flink's committer never sent: EndTxn(commit) for the
// Ongoing transaction of one transactional id whose checkpoint completed
// (action.go runs it, with the same chain as force-terminate).
const cmdCommit command = "commit"

func checkCommit(c *config, given func(string) bool) error {
	if err := checkTransactionalID(c, given); err != nil {
		return err
	}
	return needEvidence(c, "commit")
}

// needEvidence refuses a commit with nothing to verify its checkpoint from
// and no --unverified.
func needEvidence(c *config, what string) error {
	if len(c.flink.Clients) == 0 && len(c.flink.Retained) == 0 && !c.one.unverified {
		return usagef("%s needs --flink URL or --flink-checkpoints PREFIX=DIR to verify that the checkpoint completed (or --unverified, on your own word)", what)
	}
	return nil
}

func runCommit(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	return runAction(ctx, cl, c, o, std, func(ctx context.Context, cl *kafkaadmin.Client, c config) (model.Action, error) {
		s, err := cl.Refresh(ctx, nil)
		if err != nil {
			return model.Action{}, err
		}
		t, ok := s.Txn(c.one.transactionalID)
		if !ok {
			return model.Action{}, fmt.Errorf("%s is not known to any coordinator", c.one.transactionalID)
		}
		job, _ := jobOf(s, model.JobOf(t.ID).Job)
		ev := model.CommitEvidenceOf(readFlink(ctx, c), job, t)
		a, err := model.PlanCommit(t, ev, c.one.unverified)
		if err != nil {
			return a, err
		}
		a.LastWrite = lastWrite(s, a)
		if !a.Unverified {
			a.Reverify = flinkrest.Reverifier(c.flink, job, c.timeout)
		}
		return a, nil
	})
}

// lastWrite is when the brokers last saw a's producer write to one of its
// partitions (zero: not known).
func lastWrite(s *model.Snapshot, a model.Action) time.Time {
	var last int64
	for _, p := range s.Partitions {
		if pr, ok := p.Producer(a.ProducerID); ok && slices.Contains(a.Partitions, p.TopicPartition) {
			last = max(last, pr.LastWriteMs)
		}
	}
	if last <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(last)
}

// jobOf is job as the jobs view groups it (its naming scheme read from its
// ids); found is false when no id of the snapshot belongs to it.
func jobOf(s *model.Snapshot, want model.JobID) (job model.Job, found bool) {
	for _, j := range model.Group(s, nil).Jobs(nil, time.Now()) {
		if j.ID == want {
			return j, true
		}
	}
	return model.Job{ID: want}, false
}
