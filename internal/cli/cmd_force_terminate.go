package cli

import (
	"context"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// force-terminate is Kafka 4.1's kafka-transactions.sh
// forceTerminateTransaction: the ongoing transaction of one transactional id
// (action.go runs it; its check, checkTransactionalID, is describe's).
const cmdForceTerminate command = "force-terminate"

func runForceTerminate(ctx context.Context, cl *kafkaadmin.Client, c config, o out, std Stdio) error {
	return runAction(ctx, cl, c, o, std, func(ctx context.Context, cl *kafkaadmin.Client, c config) (model.Action, error) {
		return cl.PlanForceTerminate(ctx, c.one.transactionalID)
	})
}
