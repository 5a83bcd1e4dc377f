package kafkaadmin

import (
	"sync"
	"time"

	"github.com/txnscope/txnscope/model"
)

// producerCache keeps the producers a refresh read of each partition, with
// the offsets they went with. A partition's producer state changes only
// with what is written to it (records and markers move its high
// watermark), and by producers expiring. A Flink job with INCREMENTING ids
// leaves one producer a partition per id for a day: after 2,000,000 ids a
// pinned partition's DescribeProducers answered 170,000 producers each
// refresh, the largest share of the exporter's garbage and of the TUI's
// CPU. So a partition read twice at the same offsets is read again only
// when its offsets, leader or topic id have moved, or producersFor has
// passed since its last read (producers that expired meanwhile show until
// then). One-shot commands refresh once and never reuse; an abort or a
// commit re-reads its partitions itself (trail.go, markers.go).
type producerCache struct {
	mu sync.Mutex
	by map[tp]readProducersAt
	// now is time.Now; tests move it.
	now func() time.Time
}

// producersFor bounds how long a partition's producers are reused: a
// refresh or two of the TUI at 2,000,000 ids, two of the exporter's.
const producersFor = 30 * time.Second

type readProducersAt struct {
	rows     []model.Producer
	hwm, lso int64
	leader   int32
	topic    [16]byte
	at       time.Time // when the leader answered
	// quiet: the read before this one found the same offsets, so the next
	// refresh waits for the offsets before asking (one round trip more
	// when they moved after all) instead of asking beside them.
	quiet bool
}

func (c *producerCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// split parts the partitions into those to ask now, beside the offsets,
// and the quiet ones, whose last read may stand once the offsets are in.
func (c *producerCache) split(tps []tp) (now, later []tp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.clock()
	for _, p := range tps {
		if r, ok := c.by[p]; ok && r.quiet && at.Sub(r.at) < producersFor {
			later = append(later, p)
		} else {
			now = append(now, p)
		}
	}
	return now, later
}

// reuse returns the last read of each of tps whose offsets, leader and
// topic are as this refresh found them and as the read before found them,
// and the partitions to ask again. A read asked beside the offsets may
// predate them (a write in between): only the second read at the same
// offsets is sure to show them.
func (c *producerCache) reuse(tps []tp, meta metaMap, hwm, lso map[tp]int64) (kept map[tp][]model.Producer, ask []tp) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.clock()
	for _, p := range tps {
		r, ok := c.by[p]
		h, okH := hwm[p]
		l, okL := lso[p]
		leader, why := meta.leaderOf(p)
		if !ok || !r.quiet || !okH || !okL || why != "" || r.hwm != h || r.lso != l || r.leader != leader ||
			r.topic != meta[p.Topic].id || at.Sub(r.at) >= producersFor {
			ask = append(ask, p)
			continue
		}
		if kept == nil {
			kept = map[tp][]model.Producer{}
		}
		kept[p] = r.rows
	}
	return kept, ask
}

// remember records what this refresh read of the partitions it asked,
// forgets those whose read failed (a refusal must show at once), and those
// it no longer shows.
func (c *producerCache) remember(asked []tp, read map[tp][]model.Producer, shown []tp, meta metaMap, hwm, lso map[tp]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	at := c.clock()
	next := make(map[tp]readProducersAt, len(shown))
	isShown := make(map[tp]bool, len(shown))
	for _, p := range shown {
		isShown[p] = true
		if r, ok := c.by[p]; ok {
			next[p] = r
		}
	}
	for _, p := range asked {
		rows, ok := read[p]
		h, okH := hwm[p]
		l, okL := lso[p]
		leader, why := meta.leaderOf(p)
		if !ok || rows == nil || !okH || !okL || why != "" || !isShown[p] {
			delete(next, p)
			continue
		}
		was, had := c.by[p]
		r := readProducersAt{rows: rows, hwm: h, lso: l, leader: leader, topic: meta[p.Topic].id, at: at}
		r.quiet = had && was.hwm == h && was.lso == l && was.leader == leader && was.topic == r.topic
		next[p] = r
	}
	c.by = next
}
