package memlimit

import "testing"

func TestLimitFollowsTheSteadyLiveHeap(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		name string
		seen []uint64
		want int64
	}{
		{"nothing seen yet", nil, floor},
		{"a small cluster", []uint64{20 * mb, 30 * mb}, floor},
		// 500,000 ids: 100 MB between refreshes, under 200 MB during one.
		{"500,000 ids", []uint64{120 * mb, 192 * mb, 157 * mb}, floor},
		{"a cluster twice as big", []uint64{250 * mb, 400 * mb, 380 * mb}, 520 * mb},
	} {
		if got := limitFor(tc.seen, floor); got != tc.want {
			t.Errorf("%s: limit %d MiB, want %d MiB", tc.name, got/mb, tc.want/mb)
		}
	}
}

// A one-shot read of 2,000,000 ids, whose live heap grows to about 450 MB,
// leaves the collector at Go's default pace until 600 MiB; a bigger one
// still gets 30 % above its live heap.
func TestOneShotStartsHigher(t *testing.T) {
	const mb = 1 << 20
	for _, tc := range []struct {
		seen []uint64
		want int64
	}{{nil, 600 * mb}, {[]uint64{180 * mb, 450 * mb}, 600 * mb}, {[]uint64{1000 * mb}, 1300 * mb}} {
		if got := limitFor(tc.seen, oneShot); got != tc.want {
			t.Errorf("live %v MiB: limit %d MiB, want %d MiB", tc.seen, got/mb, tc.want/mb)
		}
	}
}
