package ui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
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
	for _, n := range []int{1000, 100000} {
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
