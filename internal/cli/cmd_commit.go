package cli

import (
	"context"

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
		r, err := reading(ctx, cl, c)
		if err != nil {
			return model.Action{}, err
		}
		return r.PlanCommit(c.one.transactionalID, c.one.unverified, flinkReader(c))
	})
}
