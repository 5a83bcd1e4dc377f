package kafkaadmin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// kfake keeps no coordinator log: reading it is an error that names the
// topic (the caller falls back to polling), not a hang or an empty history.
func TestReadTxnLogWithoutTheTopic(t *testing.T) {
	t.Parallel()
	_, boot := kafkatest.NewCluster(t)
	a := newAdmin(t, boot)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n := 0
	err := a.ReadTxnLog(ctx, func(model.TxnLogRecord) { n++ })
	if err == nil || !strings.Contains(err.Error(), "__transaction_state") || n != 0 {
		t.Fatalf("err %v after %d records, want an error naming the topic", err, n)
	}
}
