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
		if got := limitFor(tc.seen); got != tc.want {
			t.Errorf("%s: limit %d MiB, want %d MiB", tc.name, got/mb, tc.want/mb)
		}
	}
}
