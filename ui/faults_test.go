package ui

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/txnscope/txnscope/internal/testutil/uitest"
	"github.com/txnscope/txnscope/model"
)

// afterAbort is the fixture as a re-read finds it once crashed-job-0-7's
// transaction was aborted: the coordinator bumped its epoch and completed
// the abort, and payments-0 is no longer pinned.
func afterAbort(at time.Time) *model.Snapshot {
	s := uitest.Snapshot(at)
	for i := range s.Txns {
		if t := &s.Txns[i]; t.ID == "crashed-job-0-7" {
			t.State, t.ProducerEpoch, t.StartUnixMs, t.Partitions = model.CompleteAbort, 1, 0, nil
		}
	}
	return s
}

// TestUnknownAbortOutcomeIsReRead: an abort whose request was lost says
// "unknown outcome, re-check", is sent once, and the UI re-reads at once (no
// poll tick) and shows what the re-read found, not the state before.
func TestUnknownAbortOutcomeIsReRead(t *testing.T) {
	for _, reread := range []string{"aborted", "still open", "failed"} {
		t.Run(reread, func(t *testing.T) {
			h := started(t)
			h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
			h.admin.Result = func(a model.Action) model.Result {
				return model.Result{Action: a, At: uitest.T0, Sent: true, Unknown: true, Err: "broker 0: no answer within the timeout"}
			}
			switch reread {
			case "aborted":
				h.admin.Push(afterAbort(uitest.T0.Add(time.Second)))
			case "still open":
				h.admin.Push(uitest.Snapshot(uitest.T0.Add(time.Second)))
			case "failed":
				h.admin.Fail(errors.New("cannot reach the cluster: no answer within the timeout"))
			}
			before := h.m.data.snap
			h.selectID("crashed-job-0-7")
			h.press("a")
			h.typeText("abort")
			refreshes, ticks := h.admin.Refreshes(), len(h.ticks)
			h.press("enter")

			if n := len(h.admin.Executed()); n != 1 {
				t.Fatalf("the abort was sent %d times", n)
			}
			if h.admin.Refreshes() != refreshes+1 {
				t.Fatalf("no immediate re-read after the unknown outcome (%d refreshes before, %d after)", refreshes, h.admin.Refreshes())
			}
			if len(h.ticks) > ticks+1 {
				t.Fatalf("the re-read waited for a poll tick")
			}
			mustContain(t, h.screen(), "unknown outcome, re-check")
			h.press("esc") // close the dialog: the list behind it
			row := rowOf(t, h, "crashed-job-0-7")
			switch reread {
			case "aborted":
				if h.m.data.snap == before || !strings.Contains(row, "CompleteAbort") || strings.Contains(row, "Ongoing") {
					t.Fatalf("the list does not show the re-read state: %q", row)
				}
			case "still open":
				if !strings.Contains(row, "Ongoing") {
					t.Fatalf("the re-read says Ongoing, the list shows %q", row)
				}
			case "failed":
				if h.m.data.snap != before || h.m.poll.err == "" {
					t.Fatalf("a failed re-read replaced the data or hid the error")
				}
				// No re-read state to show: the outcome stays unknown
				// and the header says the cluster is away.
				if !strings.Contains(h.m.status, "unknown outcome, re-check") {
					t.Fatalf("status %q", h.m.status)
				}
				mustContain(t, h.screen(), "cannot reach the cluster")
			}
			if n := len(h.admin.Executed()); n != 1 {
				t.Fatalf("the abort was retried: sent %d times", n)
			}
		})
	}
}

// rowOf is the list line showing id.
func rowOf(t *testing.T, h *harness, id string) string {
	t.Helper()
	for _, l := range strings.Split(h.screen(), "\n") {
		if strings.Contains(l, id) {
			return l
		}
	}
	t.Fatalf("%s is not on screen:\n%s", id, h.screen())
	return ""
}

// flakyAdmin is a cluster that fails at random: each Refresh returns an
// error or a new snapshot (from a few with different ids), each Ping
// answers or not. Snapshots are numbered by TakenAt.
type flakyAdmin struct {
	mu      sync.Mutex
	rng     *rand.Rand
	n       int
	served  map[*model.Snapshot]bool
	latency time.Duration // up to this much per call, honouring ctx
}

func newFlakyAdmin(seed uint64, latency time.Duration) *flakyAdmin {
	return &flakyAdmin{rng: rand.New(rand.NewPCG(seed, seed)), served: map[*model.Snapshot]bool{}, latency: latency}
}

// flakyShapes are the clusters a refresh may find: the fixture, the fixture
// after an abort, and one whose ids are all different.
var flakyShapes = []func(time.Time) *model.Snapshot{uitest.Snapshot, afterAbort, otherCluster}

func otherCluster(at time.Time) *model.Snapshot {
	s := uitest.Snapshot(at)
	for i := range s.Txns {
		s.Txns[i].ID = "elsewhere-" + strconv.Itoa(i) + "-x"
	}
	s.Sort()
	return s
}

func (a *flakyAdmin) wait(ctx context.Context) error {
	a.mu.Lock()
	d := time.Duration(0)
	if a.latency > 0 {
		d = time.Duration(a.rng.Int64N(int64(a.latency)))
	}
	a.mu.Unlock()
	if d == 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (a *flakyAdmin) Refresh(ctx context.Context, _ *model.Snapshot) (*model.Snapshot, error) {
	if err := a.wait(ctx); err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	switch a.rng.IntN(4) {
	case 0:
		return nil, fmt.Errorf("cannot list transactions: refresh %d: no answer within the timeout", a.n)
	case 1:
		return nil, errors.New("cannot reach the cluster: dial tcp 127.0.0.1:9092: connection refused")
	}
	s := flakyShapes[a.rng.IntN(len(flakyShapes))](uitest.T0.Add(time.Duration(a.n) * time.Second))
	a.served[s] = true
	return s, nil
}

func (a *flakyAdmin) Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	return a.Refresh(ctx, prev)
}

// Describe is never asked: the snapshots served have no pending rows.
func (a *flakyAdmin) Describe(context.Context, []model.TxnRef) (model.Descriptions, error) {
	return model.Descriptions{}, errors.New("flaky admin: nothing is pending")
}

func (a *flakyAdmin) Ping(ctx context.Context) error {
	if err := a.wait(ctx); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rng.IntN(2) == 0 {
		return errors.New("ping: no answer within the timeout")
	}
	return nil
}

func (a *flakyAdmin) Replay(ctx context.Context, _ time.Time, _ int) (model.Replayed, error) {
	return model.Replayed{}, errors.New("no READ on __transaction_state")
}

func (a *flakyAdmin) Execute(_ context.Context, act model.Action, rec model.Recorder) model.Result {
	return uitest.Record(rec, model.Result{Action: act, At: uitest.T0, Sent: true, Sends: 1, Unknown: true, Err: "no answer within the timeout"})
}

func (a *flakyAdmin) servedIt(s *model.Snapshot) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.served[s]
}

// universe is every id any flaky refresh can report.
func universe() []string {
	var out []string
	for _, shape := range flakyShapes {
		for _, t := range shape(uitest.T0).Txns {
			if !slices.Contains(out, t.ID) {
				out = append(out, t.ID)
			}
		}
	}
	return out
}

// shownIDs are the ids of universe on the list screen.
func shownIDs(screen string, all []string) []string {
	var out []string
	for _, id := range all {
		if strings.Contains(screen, id) {
			out = append(out, id)
		}
	}
	return out
}

// TestFlakyClusterNeverShowsUnreportedTransactions drives the UI against a
// cluster that fails at random, with replies coming back late and out of
// order (the commands run whenever the test pleases, as Bubble Tea's
// goroutines would): the data shown is always the latest snapshot a refresh
// returned, never older than one shown before, a failed refresh changes none
// of it, and the list shows no id that snapshot does not have.
func TestFlakyClusterNeverShowsUnreportedTransactions(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("TXNSCOPE_FAULT_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	t.Logf("seed %d (TXNSCOPE_FAULT_SEED replays it)", seed)
	rng := rand.New(rand.NewPCG(seed, seed^1))
	admin := newFlakyAdmin(seed, 0)
	h := newHarness(t, func(o *Options) { o.Admin = admin })
	h.send(tea.WindowSizeMsg{Width: 160, Height: 48})
	all := universe()

	// pending are commands started and not yet answered; running one is
	// its reply arriving.
	var pending []tea.Cmd
	queue := func(cmd tea.Cmd) {
		if cmd != nil {
			pending = append(pending, cmd)
		}
	}
	deliver := func(msg tea.Msg) {
		switch msg := msg.(type) {
		case nil:
		case tea.BatchMsg:
			for _, c := range msg {
				queue(c)
			}
		case tea.QuitMsg:
		default:
			prev := h.m.data.snap
			_, cmd := h.m.Update(msg)
			if r, ok := msg.(refreshedMsg); ok && r.err != nil && h.m.data.snap != prev {
				t.Fatalf("a failed refresh (%v) replaced the data", r.err)
			}
			queue(cmd)
		}
	}
	queue(h.m.Init())
	keys := []string{"j", "k", "g", "G", "f", "s", "tab", "t", "p", "c", "r", "enter", "esc", "e"}
	var (
		lastShown time.Time
		applied   int
	)
	for step := range 600 {
		switch n := rng.IntN(10); {
		case n < 5 && len(pending) > 0:
			i := rng.IntN(len(pending)) // any in-flight command may answer first
			cmd := pending[i]
			pending = slices.Delete(pending, i, i+1)
			deliver(cmd())
		case n < 7 && len(h.ticks) > 0:
			tk := h.ticks[len(h.ticks)-1]
			h.ticks = h.ticks[:len(h.ticks)-1]
			h.now = h.now.Add(tk.d)
			deliver(tk.msg)
		default:
			deliver(keyMsg(keys[rng.IntN(len(keys))]))
		}

		s := h.m.data.snap
		if s == nil {
			continue
		}
		if !admin.servedIt(s) {
			t.Fatalf("step %d: the UI shows a snapshot no refresh returned", step)
		}
		if s.TakenAt.After(lastShown) {
			applied++
		}
		if s.TakenAt.Before(lastShown) {
			t.Fatalf("step %d: the UI went back from the snapshot of %s to an older one of %s", step, lastShown, s.TakenAt)
		}
		lastShown = s.TakenAt
		if h.m.cur != screenList || h.m.showEvents || h.m.showHelp || h.m.dialog != nil {
			continue // the events pane rightly names ids seen before
		}
		var have []string
		for _, tx := range s.Txns {
			have = append(have, tx.ID)
		}
		for _, id := range shownIDs(h.screen(), all) {
			if !slices.Contains(have, id) {
				t.Fatalf("step %d: the list shows %s, which the latest snapshot (%s) does not have:\n%s", step, id, s.TakenAt, h.screen())
			}
		}
	}
	admin.mu.Lock()
	defer admin.mu.Unlock()
	t.Logf("%d refreshes, %d snapshots shown", admin.n, applied)
	if admin.n < 20 || applied < 5 {
		t.Errorf("the run exercised too little: %d refreshes, %d snapshots shown", admin.n, applied)
	}
}

// TestFlakyClusterProgram runs the real program against the flaky cluster
// with latency, refreshing every 20 ms, and quits in the middle of it: it
// ends promptly, shows a snapshot a refresh returned, and leaves nothing
// running (TestMain's goleak).
func TestFlakyClusterProgram(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	admin := newFlakyAdmin(seed, 60*time.Millisecond)
	m := New(Options{Admin: admin, Bootstrap: "127.0.0.1:9092", Refresh: 20 * time.Millisecond})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 35))
	time.Sleep(1200 * time.Millisecond)
	tm.Send(tea.KeyPressMsg{Code: 'r', Text: "r"})
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if final.data.snap != nil && !admin.servedIt(final.data.snap) {
		t.Fatal("the program shows a snapshot no refresh returned")
	}
	admin.mu.Lock()
	n := admin.n
	admin.mu.Unlock()
	if n < 5 {
		t.Errorf("only %d refreshes in 1.2 s at a 20 ms interval", n)
	}
}
