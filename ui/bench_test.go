package ui

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// BenchmarkListView is one frame of the list at 160×48 in colour. Only the
// visible window is drawn, so the cost must not grow with the number of ids.
func BenchmarkListView(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			h := newHarness(b)
			h.admin.Push(uitest.Big(n, uitest.T0))
			h.run(h.m.Init())
			h.send(tea.ColorProfileMsg{Profile: colorprofile.TrueColor})
			h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
			h.press("pgdown", "pgdown") // somewhere in the middle
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = h.m.View()
			}
		})
	}
}

// BenchmarkRefreshApply is taking in one refresh of n ids on the UI
// goroutine (rows, history), what happens every poll interval.
func BenchmarkRefreshApply(b *testing.B) {
	for _, n := range []int{1000, 100000, 500000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			h := newHarness(b)
			snap := uitest.Big(n, uitest.T0)
			h.admin.Push(snap)
			h.run(h.m.Init())
			msg := refreshedMsg{data: h.m.data}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				h.m.poll.busy = true
				msg.gen = h.m.poll.gen
				h.m.Update(msg)
			}
		})
	}
}

// nextAdmin answers every Poll with the snapshot in next.
type nextAdmin struct {
	*uitest.Admin
	next *model.Snapshot
}

func (a *nextAdmin) Poll(context.Context, *model.Snapshot) (*model.Snapshot, error) {
	return a.next, nil
}

// steady is a list of n ids of Flink's mix (uitest.Flink) that has taken in
// two refreshes, as the TUI is a few seconds after start.
func steady(b *testing.B, n int) (*harness, *nextAdmin) {
	h := newHarness(b)
	a := &nextAdmin{Admin: h.admin}
	h.m.o.Admin = a
	a.next = uitest.Flink(n, uitest.T0)
	h.run(h.m.Init())
	for range 2 {
		takeIn(h, a, uitest.FlinkNext(a.next, h.now.Add(2*time.Second)))
	}
	return h, a
}

// takeIn is one refresh that answers next, from the request to the screens
// following it: the diff and the derived data (on the refresh's goroutine
// in the TUI) and the history and screens (on the UI goroutine).
func takeIn(h *harness, a *nextAdmin, next *model.Snapshot) {
	h.now = next.TakenAt
	a.next = next
	h.m.poll.busy = false
	msg := h.m.refresh()()
	h.m.Update(msg)
}

// BenchmarkRefreshTakeIn is the in-process cost of one steady refresh of
// Flink's mix: each one gets a snapshot with strings of its own and one id
// in a hundred changed, as kafkaadmin would return.
func BenchmarkRefreshTakeIn(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			h, a := steady(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				next := uitest.FlinkNext(a.next, h.now.Add(2*time.Second))
				b.StartTimer()
				takeIn(h, a, next)
			}
			if h.m.data.snap != a.next || h.m.hist.Len() == 0 {
				b.Fatal("the refresh was not taken in")
			}
		})
	}
}

// BenchmarkMemoryPerID reports the heap a steady TUI holds per id (B/id):
// the model after two refreshes of Flink's mix, while the next snapshot is
// being built (two generations alive), measured after a GC.
func BenchmarkMemoryPerID(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			before := liveHeap()
			h, a := steady(b, n)
			building := uitest.FlinkNext(a.next, h.now.Add(2*time.Second))
			after := liveHeap()
			runtime.KeepAlive(h)
			runtime.KeepAlive(building)
			for b.Loop() {
			}
			b.ReportMetric(float64(after-before)/float64(n), "B/id")
		})
	}
}

func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// BenchmarkKeys is how long a key takes to answer, from the key press to the
// frame drawn after it, on a steady list of Flink's mix: the target is 50 ms
// at 500,000 ids. Each sub-benchmark is one round trip that ends where it
// began (down and up; a sort cycled through; a filter typed and cleared; the
// partitions view and back; a detail opened and closed), per key.
func BenchmarkKeys(b *testing.B) {
	rounds := []struct {
		name string
		keys []string
	}{
		{"down-up", []string{"down", "up"}},
		{"sort", []string{"s", "s", "s", "s"}},
		{"filter", []string{"/", "o", "r", "d", "esc"}},
		{"views", []string{"p", "t"}},
		{"detail", []string{"enter", "esc"}},
	}
	for _, n := range []int{100_000, 500_000} {
		h, _ := steady(b, n)
		for _, r := range rounds {
			b.Run(fmt.Sprintf("%dk/%s", n/1000, r.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					for _, k := range r.keys {
						h.press(k)
						_ = h.m.View()
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(r.keys))/1e6, "ms/key")
			})
		}
	}
}
