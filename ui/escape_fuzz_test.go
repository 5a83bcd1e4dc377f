package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// FuzzRenderIDs gives two transactional ids and a topic name from the fuzzer
// to the whole screen (header, list, detail, partitions view) at a width the
// fuzzer picks, on the ASCII profile NO_COLOR gives. Whatever they hold, no
// control character or escape sequence of theirs reaches the frame, each id
// is exactly one row with its own state, producer id/epoch and age, and
// every line is exactly the terminal's width. The seed corpus in
// testdata/fuzz/FuzzRenderIDs runs with every go test.
func FuzzRenderIDs(f *testing.F) {
	f.Add("orders-enricher-v1-0-41", "orders-enricher-v1-1-41", "orders", uint8(0))
	f.Fuzz(func(t *testing.T, a, b, topic string, extra uint8) {
		if a == b || strings.Contains(a+b, "/7") {
			t.Skip() // the coordinators never list an id twice; an id naming a producer would fool the row count
		}
		at := uitest.T0
		tp := model.TopicPartition{Topic: topic, Partition: 3}
		open := func(id string, pid int64, age time.Duration) model.Txn {
			return model.Txn{ID: id, State: model.Ongoing, ProducerID: pid, ProducerEpoch: 7, Coordinator: 1,
				TimeoutMs: 60000, StartUnixMs: at.Add(-age).UnixMilli(), Partitions: []model.TopicPartition{tp}, Described: true}
		}
		s := &model.Snapshot{TakenAt: at, Bootstrap: "127.0.0.1:9092", Brokers: 1,
			Txns: []model.Txn{open(a, 111, 41*time.Second), open(b, 222, 13*time.Second)},
			Partitions: []model.Partition{{TopicPartition: tp, Leader: 1, HighWatermark: 9, LastStableOffset: 2,
				Producers: []model.Producer{{ProducerID: 111, ProducerEpoch: 7, CurrentTxnStartOffset: 2}}}},
		}
		s.Sort()
		h := newHarness(t)
		h.admin.Push(s)
		h.run(h.m.Init())
		w := minWidth + int(extra)%121
		h.send(tea.WindowSizeMsg{Width: w, Height: 24})

		frame := pinned(t, h, colorprofile.ASCII)
		checkFrame(t, frame, w, 24)
		lines := strings.Split(ansi.Strip(frame), "\n")
		for _, r := range []struct{ pid, age string }{{"111/7", "41s"}, {"222/7", "13s"}} {
			n := 0
			for _, l := range lines[3 : len(lines)-2] { // the rows, between the column titles and the status line
				if strings.Contains(l, " "+r.pid+" ") {
					n++
					if !strings.Contains(l, " Ongoing ") || !strings.Contains(l, " "+r.age+" ") {
						t.Errorf("%s's row lost its state or age: %q", r.pid, l)
					}
				}
			}
			if n != 1 {
				t.Errorf("producer %s shows on %d rows, want 1:\n%s", r.pid, n, strings.Join(lines, "\n"))
			}
		}
		if rows := strings.TrimSpace(lines[5]); rows != "" {
			t.Errorf("a third row appeared: %q", rows)
		}

		h.selectID(a)
		h.press("enter")
		checkFrame(t, pinned(t, h, colorprofile.ASCII), w, 24)
		h.press("p")
		checkFrame(t, pinned(t, h, colorprofile.ASCII), w, 24)
	})
}
