package uitest

import (
	"fmt"
	"strings"
	"time"

	"github.com/txnscope/txnscope/model"
)

// topicParts is the partition count of the one topic of Flink's mix.
const topicParts = 24

// Flink is n ids as a week of Flink checkpoints leaves them (issue 11): ids
// <job>-<subtask>-<checkpoint> of five jobs at parallelism 10, one in a
// hundred Ongoing on a topic of 24 partitions (which they pin), the rest
// CompleteCommit. Deterministic.
func Flink(n int, at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 1, BrokerMaxTimeoutMs: 900000,
		Txns: make([]model.Txn, n), Scanned: topicParts}
	jobs := [...]string{"orders-enricher-sink", "payments-dedup-sink", "clicks-sessionizer", "audit-writer", "fraud-scoring-sink"}
	for i := range s.Txns {
		id := fmt.Sprintf("%s-%d-%d", jobs[i%len(jobs)], i/len(jobs)%10, 1000+i/50)
		t := model.Txn{ID: id, State: model.CompleteCommit, ProducerID: int64(10_000 + i), ProducerEpoch: int16(i % 5),
			TimeoutMs: 900000, Described: true}
		if i%100 == 0 {
			openAt(&t, at, i)
		}
		s.Txns[i] = t
	}
	s.Sort()
	s.Partitions = scaleParts(s)
	return s
}

func openAt(t *model.Txn, at time.Time, i int) {
	t.State = model.Ongoing
	t.SetStart(at.Add(-time.Duration(i%90) * time.Second))
	t.Partitions = []model.TopicPartition{{Topic: "orders", Partition: int32(i % topicParts)}}
}

// scaleParts are the topic's partitions, each pinned by the open
// transactions on it.
func scaleParts(s *model.Snapshot) []model.Partition {
	parts := make([]model.Partition, topicParts)
	for p := range parts {
		parts[p] = model.Partition{TopicPartition: model.TopicPartition{Topic: "orders", Partition: int32(p)},
			HighWatermark: 1_000_000, LastStableOffset: 1_000_000}
	}
	for _, t := range s.Txns {
		if !t.State.Open() {
			continue
		}
		p := &parts[t.Partitions[0].Partition]
		start := int64(1_000_000 - 100*len(p.Producers) - 100)
		p.Producers = append(p.Producers, model.Producer{ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch,
			LastWriteMs: model.WriteMs(s.TakenAt), CoordinatorEpoch: 1, CurrentTxnStartOffset: start})
		p.LastStableOffset = min(p.LastStableOffset, start)
	}
	return parts
}

// FlinkNext is the refresh after prev, as kafkaadmin builds it: every
// string freshly allocated (decoded from the responses), and one id in a
// hundred moved on (half the open ones committed, as many idle ones began):
// applied twice it gives prev's states back. The partitions are rebuilt.
func FlinkNext(prev *model.Snapshot, at time.Time) *model.Snapshot {
	s := &model.Snapshot{TakenAt: at, Bootstrap: prev.Bootstrap, Brokers: prev.Brokers,
		BrokerMaxTimeoutMs: prev.BrokerMaxTimeoutMs, Txns: make([]model.Txn, len(prev.Txns)), Scanned: prev.Scanned}
	for i, p := range prev.Txns {
		t := p
		t.ID = strings.Clone(p.ID)
		if p.Partitions != nil {
			t.Partitions = []model.TopicPartition{{Topic: strings.Clone(p.Partitions[0].Topic), Partition: p.Partitions[0].Partition}}
		}
		if i%200 == 0 || i%200 == 50 {
			if t.State.Open() {
				t.State, t.StartUnixMs, t.Partitions = model.CompleteCommit, 0, nil
				t.ProducerEpoch++
			} else {
				openAt(&t, at, i)
			}
		}
		s.Txns[i] = t
	}
	s.Sort()
	s.Partitions = scaleParts(s)
	return s
}
