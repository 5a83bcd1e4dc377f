package kafkaadmin_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// A client left running on a cluster whose ids come and go (Flink names a new
// one every checkpoint, the cluster expires the old ones) keeps nothing of the
// ids it described once they are gone. The ids the listing cannot place
// (kfake lists every id on every broker) were described through kgo, whose
// cache of their coordinators is never emptied: 80 to 170 bytes an id, and the
// demo's TUI grew by 0.1 MB a minute. Not parallel: it weighs the heap.
func TestDescribedIDsLeaveNothingBehind(t *testing.T) {
	const ids = 4000
	_, boot := kafkatest.NewCluster(t, kfake.BrokerConfigs(map[string]string{"transactional.id.expiration.ms": "3000"}))
	a := newAdmin(t, boot)
	// round makes ids new ids, describes them all, and waits until they have
	// expired and a refresh lists none.
	round := func(r int) {
		t.Helper()
		kafkatest.InitIDs(t, boot, time.Minute, someIDs(fmt.Sprintf("round%d", r), ids)...)
		s := refresh(t, a, nil)
		described := 0
		for _, tx := range s.Txns {
			if tx.Described && tx.Err == "" {
				described++
			}
		}
		if described != ids {
			t.Fatalf("round %d: %d of %d ids described", r, described, ids)
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(refresh(t, a, nil).Txns) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the ids did not expire", r)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The first rounds size what is reused (kfake's maps, the client's
	// buffers); the last must leave the heap where they did.
	round(1)
	round(2)
	before := liveHeap()
	round(3)
	grew := int64(liveHeap()) - int64(before)
	t.Logf("the heap grew by %d bytes", grew)
	if grew > ids*20 {
		t.Errorf("describing %d ids that are gone since left %d bytes behind (%d an id)", ids, grew, grew/ids)
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
