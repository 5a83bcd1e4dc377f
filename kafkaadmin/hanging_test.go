package kafkaadmin_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// answerListByPID replaces the answer to every ListTransactions filtered by
// producer id (find-hanging's question) with edit's, on every broker.
func answerListByPID(c *kfake.Cluster, edit func(node int32, resp *kmsg.ListTransactionsResponse)) {
	c.ControlKey(int16(kmsg.ListTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ListTransactionsRequest)
		if len(req.ProducerIDFilters) == 0 {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.ListTransactionsResponse)
		resp.Version = req.Version
		edit(c.CurrentNode(), resp)
		return resp, nil, true
	})
}

// answerDescribe replaces every DescribeTransactions answer for id.
func answerDescribe(c *kfake.Cluster, id string, edit func(*kmsg.DescribeTransactionsResponseTransactionState)) {
	c.ControlKey(int16(kmsg.DescribeTransactions), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.DescribeTransactionsRequest)
		resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
		resp.Version = req.Version
		for _, got := range req.TransactionalIDs {
			st := kmsg.NewDescribeTransactionsResponseTransactionState()
			st.TransactionalID = got
			if got == id {
				edit(&st)
			} else {
				st.ErrorCode = kerr.TransactionalIDNotFound.Code
			}
			resp.TransactionStates = append(resp.TransactionStates, st)
		}
		return resp, nil, true
	})
}

func findHanging(t *testing.T, a *kafkaadmin.Client, s kafkaadmin.HangingScope) (kafkaadmin.HangingReport, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	time.Sleep(2 * time.Millisecond) // strictly older than a zero threshold
	return a.FindHanging(ctx, s)
}

func TestFindHanging(t *testing.T) {
	orders := kafkaadmin.HangingScope{Topic: "orders", Partition: -1, Broker: -1}
	open := func(t *testing.T) (*kfake.Cluster, *kafkaadmin.Client, int64) {
		c, bs := kafkatest.NewCluster(t)
		kafkatest.OpenTxn(t, bs, "job-0-4", "orders", time.Minute)
		a := newAdmin(t, bs)
		s := refresh(t, a, nil)
		return c, a, txnOf(t, s, "job-0-4").ProducerID
	}

	t.Run("listed by its coordinator: not hanging, at any threshold", func(t *testing.T) {
		_, a, _ := open(t)
		rep, err := findHanging(t, a, orders)
		if err != nil || len(rep.Hanging) != 0 || rep.Partitions != kafkatest.Partitions || rep.Candidates != 1 {
			t.Errorf("report %+v, %v; want 1 candidate of %d partitions, none hanging", rep, err, kafkatest.Partitions)
		}
	})

	t.Run("no id owns the producer", func(t *testing.T) {
		c, a, pid := open(t)
		answerListByPID(c, func(int32, *kmsg.ListTransactionsResponse) {})
		rep, err := findHanging(t, a, orders)
		if err != nil || len(rep.Hanging) != 1 {
			t.Fatalf("report %+v, %v", rep, err)
		}
		h := rep.Hanging[0]
		if h.ProducerID != pid || h.TopicPartition != (model.TopicPartition{Topic: "orders"}) || h.Reason != model.NoOwner || h.CurrentTxnStartOffset != 0 {
			t.Errorf("hanging %+v", h)
		}
		// Under the default threshold a fresh transaction is no candidate.
		rep, err = findHanging(t, a, kafkaadmin.HangingScope{Topic: "orders", Partition: 0, Broker: -1, MaxTimeout: model.DefaultMaxTxnTimeout})
		if err != nil || rep.Candidates != 0 || len(rep.Hanging) != 0 || rep.Partitions != 1 {
			t.Errorf("default threshold: %+v, %v", rep, err)
		}
	})

	t.Run("the owner is not found", func(t *testing.T) {
		c, a, _ := open(t)
		answerDescribe(c, "job-0-4", func(st *kmsg.DescribeTransactionsResponseTransactionState) {
			st.ErrorCode = kerr.TransactionalIDNotFound.Code
		})
		rep, err := findHanging(t, a, orders)
		if err != nil || len(rep.Hanging) != 1 || rep.Hanging[0].Reason != model.OwnerNotFound || rep.Hanging[0].TransactionalID != "job-0-4" {
			t.Errorf("report %+v, %v", rep, err)
		}
	})

	t.Run("the owner's transaction does not list the partition", func(t *testing.T) {
		c, a, pid := open(t)
		answerDescribe(c, "job-0-4", func(st *kmsg.DescribeTransactionsResponseTransactionState) {
			st.State, st.ProducerID, st.ProducerEpoch, st.TimeoutMillis, st.StartTimestamp = "Ongoing", pid, 0, 60000, time.Now().UnixMilli()
			tp := kmsg.NewDescribeTransactionsResponseTransactionStateTopic()
			tp.Topic, tp.Partitions = "orders", []int32{2}
			st.Topics = append(st.Topics, tp)
		})
		rep, err := findHanging(t, a, orders)
		if err != nil || len(rep.Hanging) != 1 || rep.Hanging[0].Reason != model.NotInTxn || rep.Hanging[0].Partition != 0 {
			t.Errorf("report %+v, %v", rep, err)
		}
	})

	t.Run("a broker that cannot be asked about owners: nothing is called hanging", func(t *testing.T) {
		c, a, _ := open(t)
		answerListByPID(c, func(node int32, resp *kmsg.ListTransactionsResponse) {
			if node == 1 {
				resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			}
		})
		rep, err := findHanging(t, a, orders)
		if err == nil || len(rep.Hanging) != 0 || !strings.Contains(err.Error(), "broker 1") {
			t.Errorf("report %+v, err %v; want no rows and an error naming broker 1", rep, err)
		}
	})

	t.Run("an owner that cannot be described is not judged", func(t *testing.T) {
		c, a, _ := open(t)
		answerDescribe(c, "job-0-4", func(st *kmsg.DescribeTransactionsResponseTransactionState) {
			st.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		})
		rep, err := findHanging(t, a, orders)
		if err == nil || len(rep.Hanging) != 0 || !strings.Contains(err.Error(), "job-0-4") {
			t.Errorf("report %+v, err %v", rep, err)
		}
	})

	t.Run("an unknown topic", func(t *testing.T) {
		_, a, _ := open(t)
		_, err := findHanging(t, a, kafkaadmin.HangingScope{Topic: "nope", Partition: -1, Broker: -1})
		if err == nil || !strings.Contains(err.Error(), "UNKNOWN_TOPIC_OR_PARTITION") {
			t.Errorf("err %v", err)
		}
	})
}
