package kafkaadmin_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

func TestPlanAbort(t *testing.T) {
	c, bs := kafkatest.NewCluster(t)
	kafkatest.OpenTxn(t, bs, "job-1-4", "orders", time.Minute)
	a := newAdmin(t, bs)
	pid := txnOf(t, refresh(t, a, nil), "job-1-4").ProducerID
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tp := model.TopicPartition{Topic: "orders", Partition: 0}

	// The producer wrote moments ago: under the idle rule (the brokers'
	// transaction.max.timeout.ms) its transaction may be live.
	_, err := a.PlanAbort(ctx, kafkaadmin.AbortSpec{TopicPartition: tp, StartOffset: 0})
	if !errors.Is(err, model.ErrNotIdle) || !strings.Contains(err.Error(), "not over 15m00s") {
		t.Errorf("a producer that just wrote: %v", err)
	}
	_, err = a.PlanAbort(ctx, kafkaadmin.AbortSpec{TopicPartition: tp, StartOffset: 0, MinIdle: time.Hour})
	if !errors.Is(err, model.ErrNotIdle) || !strings.Contains(err.Error(), "not over 1h00m") {
		t.Errorf("a producer that just wrote, rule of an hour: %v", err)
	}
	act, err := a.PlanAbort(ctx, kafkaadmin.AbortSpec{TopicPartition: tp, StartOffset: 0, WaiveIdle: true})
	if err != nil || act.Kind != model.AbortPartition || act.ProducerID != pid || act.StartOffset != 0 || act.Leader != c.LeaderFor("orders", 0) ||
		!act.IdleWaived || act.ConfirmWord() != "abort anyway" {
		t.Errorf("by start offset: %+v, %v", act, err)
	}
	act, err = a.PlanAbort(ctx, kafkaadmin.AbortSpec{TopicPartition: tp, StartOffset: -1, ProducerID: pid, ProducerEpoch: 0, CoordinatorEpoch: 0, WaiveIdle: true})
	if err != nil || act.CoordinatorEpoch != 0 || act.StartOffset != 0 {
		t.Errorf("by producer: %+v, %v", act, err)
	}
	for _, s := range []kafkaadmin.AbortSpec{
		{TopicPartition: tp, StartOffset: -1, ProducerID: pid, ProducerEpoch: 0, CoordinatorEpoch: 5, WaiveIdle: true},
		{TopicPartition: tp, StartOffset: 1},
		{TopicPartition: tp, StartOffset: -1, ProducerID: pid + 1},
		{TopicPartition: tp, StartOffset: -1, ProducerID: pid, ProducerEpoch: 3},
		{TopicPartition: model.TopicPartition{Topic: "orders", Partition: 9}, StartOffset: 0},
	} {
		if act, err := a.PlanAbort(ctx, s); err == nil {
			t.Errorf("%+v planned %+v", s, act)
		}
	}

	ft, err := a.PlanForceTerminate(ctx, "job-1-4")
	if err != nil || ft.Kind != model.ForceTerminate || ft.State != model.Ongoing || ft.ProducerID != pid || ft.Start.IsZero() ||
		len(ft.Partitions) != 1 || ft.TimeoutMs != 60000 {
		t.Errorf("force-terminate plan %+v, %v", ft, err)
	}
	if _, err := a.PlanForceTerminate(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "TRANSACTIONAL_ID_NOT_FOUND") {
		t.Errorf("unknown id: %v", err)
	}
}
