package model

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func jobEv(at time.Time, id string, k EventKind) Event { return Event{At: at, ID: id, Kind: k} }

func jobNamed(t *testing.T, jobs []Job, name string) Job {
	t.Helper()
	for _, j := range jobs {
		if j.ID.Name == name {
			return j
		}
	}
	t.Fatalf("no job %q in %d jobs", name, len(jobs))
	return Job{}
}

// What History saw joins the grouping: each subtask's last commit (not a
// baseline's: it says what committed, not when), the slowest subtask, and the
// last 5 minutes' commits, aborts, fences (aborts another producer made:
// fenced, force-terminated) and timeouts apart, of ids gone from the
// cluster too; older outcomes are left out.
func TestJobsAddWhatHistorySaw(t *testing.T) {
	now := time.Unix(100_020, 0)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	open := func(id string) Txn {
		tx := Txn{ID: id, State: Ongoing, TimeoutMs: 60000, Described: true}
		tx.SetStart(ago(5 * time.Second))
		return tx
	}
	done := func(id string) Txn { return Txn{ID: id, State: CompleteCommit, Described: true} }
	// A crashed attempt's transaction, older than a live one gets (three
	// times the job's cadence, 4m30s).
	left := open("orders-1-9")
	left.SetStart(ago(5 * time.Minute))
	left.TimeoutMs = 600000
	s := &Snapshot{TakenAt: now, Txns: []Txn{done("orders-0-10"), done("orders-0-11"), open("orders-0-12"),
		left, done("orders-1-10"), open("orders-1-11")}}
	s.Sort()
	h := NewHistory(100)
	h.Baseline(&Snapshot{TakenAt: ago(10 * time.Minute), Txns: []Txn{done("orders-1-10")}})
	h.Add([]Event{
		jobEv(ago(7*time.Minute), "orders-0-3", Committed), jobEv(ago(6*time.Minute), "orders-0-4", Aborted),
		jobEv(ago(4*time.Minute), "orders-0-5", Aborted), jobEv(ago(3*time.Minute), "orders-1-6", TimedOut),
		jobEv(ago(2*time.Minute), "orders-0-10", Committed), jobEv(ago(2*time.Minute), "orders-1-8", ForceTerminated),
		jobEv(ago(time.Minute), "orders-0-7", Fenced), jobEv(ago(30*time.Second), "orders-0-11", Committed),
	})
	j := jobNamed(t, Jobs(s, h, now), "orders")
	if j.Commits5m != 2 || j.Aborts5m != 4 || j.Fences5m != 2 || j.Timeouts5m != 1 {
		t.Errorf("5m: %d commits, %d aborts, %d fences, %d timeouts; want 2, 4, 2, 1", j.Commits5m, j.Aborts5m, j.Fences5m, j.Timeouts5m)
	}
	if !j.LastCommit.Equal(ago(30*time.Second)) || !j.Units[0].LastCommit.Equal(ago(30*time.Second)) {
		t.Errorf("last commit %v, subtask 0's %v; want 30s ago", now.Sub(j.LastCommit), now.Sub(j.Units[0].LastCommit))
	}
	// A baseline says a checkpoint committed, not when: subtask 1's last
	// commit is unknown, not the moment txnscope looked.
	if j.SlowestUnit != "0" || !j.Units[1].LastCommit.IsZero() {
		t.Errorf("slowest %q at %v ago, subtask 1's last commit %v; want subtask 0, and 1's unknown", j.SlowestUnit, now.Sub(j.SlowestCommit), j.Units[1].LastCommit)
	}
	if !slices.Equal(j.Lingering, []string{"orders-1-9"}) || !j.LingeringFrom.Equal(ago(5*time.Minute).Add(10*time.Minute)) ||
		!j.LingeringUntil.Equal(j.LingeringFrom) {
		t.Errorf("lingering %v from %v until %v", j.Lingering, j.LingeringFrom, j.LingeringUntil)
	}

	// An abort the next poll finds was a fence (Event.Revises).
	h.Add([]Event{jobEv(ago(10*time.Second), "orders-0-13", Aborted)})
	h.Add([]Event{{At: now, ID: "orders-0-13", Kind: Fenced, Revises: true}})
	if j := jobNamed(t, Jobs(s, h, now), "orders"); j.Aborts5m != 5 || j.Fences5m != 3 {
		t.Errorf("after a revised abort: %d aborts, %d fences; want 5, 3", j.Aborts5m, j.Fences5m)
	}
	// Five minutes on, the window is empty but the last commits stay.
	later := now.Add(6 * time.Minute)
	if j := jobNamed(t, Jobs(s, h, later), "orders"); j.Commits5m+j.Aborts5m+j.Fences5m != 0 || !j.LastCommit.Equal(ago(30*time.Second)) {
		t.Errorf("6m later: %d/%d/%d in 5m, last commit %v", j.Commits5m, j.Aborts5m, j.Fences5m, j.LastCommit)
	}
}

// A checkpoint History saw committed counts for the lingering rule when the
// snapshot's state does not say so (a cluster that shows Empty after a
// commit, with no log read); with no history at all nothing lingers.
func TestJobsLingeringTakesHistorysCommits(t *testing.T) {
	now := time.Unix(100_000, 0)
	s := &Snapshot{Txns: []Txn{{ID: "orders-0-10", State: Ongoing, Described: true, StartUnixMs: now.Add(-2 * time.Minute).UnixMilli()},
		{ID: "orders-0-11", State: Empty, Described: true}}}
	if j := jobNamed(t, Jobs(s, nil, now), "orders"); len(j.Lingering) != 0 || j.NewestCommitted != -1 {
		t.Fatalf("no history: lingering %v, newest committed %d", j.Lingering, j.NewestCommitted)
	}
	h := NewHistory(10)
	h.Add([]Event{jobEv(now, "orders-0-11", Committed)})
	if j := jobNamed(t, Jobs(s, h, now), "orders"); !slices.Equal(j.Lingering, []string{"orders-0-10"}) || j.NewestCommitted != 11 {
		t.Errorf("history's commit: lingering %v, newest committed %d", j.Lingering, j.NewestCommitted)
	}
}

// The partitions a job's open transactions pin and the groups stuck there;
// the lingering problem names those its lingering transactions pin, and
// says until when the coordinator leaves them.
func TestJobsPinsAndStuckGroups(t *testing.T) {
	// 35s after the transactions began: older than a live one gets.
	now := pinT0.Add(25 * time.Second)
	s := &Snapshot{TakenAt: now, Txns: []Txn{
		otxn("orders-0-9", Ongoing, 11, 1, tpOf("orders", 0)),
		{ID: "orders-0-10", State: CompleteCommit, Described: true},
		otxn("orders-0-11", Ongoing, 12, 1, tpOf("orders", 1)),
		otxn("orders-1-9", Ongoing, 13, 1, tpOf("orders", 2)),
		{ID: "orders-1-10", State: CompleteCommit, Described: true},
		// A Streams app's reader is stuck once the transaction is older
		// than the app's commit gap: its timeout, with no cadence known.
		func() Txn {
			t := otxn("other-app-0_1", Ongoing, 14, 1, tpOf("clicks", 0))
			t.TimeoutMs = 30000
			return t
		}(),
	}, Partitions: []Partition{
		part("orders", 0, 120, 100, pprod(11, 1, 100, time.Second)),
		part("orders", 1, 220, 200, pprod(12, 1, 200, time.Second)),
		part("orders", 2, 320, 300, pprod(13, 1, 300, time.Second)),
		part("clicks", 0, 20, 10, pprod(14, 1, 10, time.Second)),
	}, GroupCommits: []GroupCommit{
		{Group: "billing", TopicPartition: tpOf("orders", 0), Offset: 100},
		{Group: "audit", TopicPartition: tpOf("orders", 2), Offset: 298},
		{Group: "billing", TopicPartition: tpOf("orders", 2), Offset: 300},
		{Group: "clicks-reader", TopicPartition: tpOf("clicks", 0), Offset: 10},
	}}
	s.Sort()
	SortGroupCommits(s.GroupCommits)
	j := jobNamed(t, Jobs(s, nil, now), "orders")
	var pinned []string
	for _, p := range j.Pinned {
		pinned = append(pinned, p.ID+"@"+p.Topic+"-"+string(rune('0'+p.Partition))+":"+strings.Join(p.Groups, "+"))
	}
	want := []string{"orders-0-9@orders-0:billing", "orders-0-11@orders-1:", "orders-1-9@orders-2:audit+billing"}
	if !slices.Equal(pinned, want) || !slices.Equal(j.StuckGroups, []string{"audit", "billing"}) {
		t.Fatalf("pinned %q stuck %q; want %q, audit and billing", pinned, j.StuckGroups, want)
	}
	if !slices.Equal(j.Lingering, []string{"orders-0-9", "orders-1-9"}) || len(j.LingeringPins()) != 2 {
		t.Fatalf("lingering %v, their pins %v", j.Lingering, j.LingeringPins())
	}
	p := j.Problems(s, Query{}, now)[0]
	deadline := pinT0.Add(-10 * time.Second).Add(time.Minute)
	for _, want := range []string{"2 lingering after a restart"} {
		if p.What != want {
			t.Errorf("what %q, want %q", p.What, want)
		}
	}
	if !strings.Contains(p.Why, "pin 2 partitions (hold the LSO of orders-0, orders-2)") || !strings.Contains(p.Why, "audit, billing") {
		t.Errorf("why %q: want the partitions and the groups", p.Why)
	}
	if want := "wait until " + deadline.UTC().Format("15:04:05") + " UTC (in 25s), when transaction.timeout.ms aborts them, or force-terminate them all (a on the job)"; p.WayOut != want {
		t.Errorf("way out %q, want %q", p.WayOut, want)
	}
	// On screen, the times are the screen clock's.
	tokyo := time.FixedZone("JST", 9*3600)
	if p := j.Problems(s, Query{Loc: tokyo}, now)[0]; !strings.Contains(p.WayOut, "wait until "+deadline.In(tokyo).Format("15:04:05")+" JST (in 25s)") {
		t.Errorf("way out in JST %q", p.WayOut)
	}
	if other := jobNamed(t, Jobs(s, nil, now), "other-app"); len(other.Pinned) != 1 || !slices.Equal(other.StuckGroups, []string{"clicks-reader"}) {
		t.Errorf("other-app: pinned %v stuck %v", other.Pinned, other.StuckGroups)
	}
}

// The lingering way out without a known timeout, and with two: until the
// last, the first named.
func TestLingeringWayOut(t *testing.T) {
	now := pinT0
	j := Job{ID: JobID{FlinkSink, "orders"}, Lingering: []string{"orders-0-1"}}
	if p := j.Problems(nil, Query{}, now)[0]; p.WayOut != "wait until transaction.timeout.ms aborts them, or force-terminate them all (a on the job)" {
		t.Errorf("no timeout known: %q", p.WayOut)
	}
	j.LingeringFrom, j.LingeringUntil = now.Add(time.Minute), now.Add(90*time.Minute)
	want := "wait until 04:30:00 UTC (in 1h30m), when transaction.timeout.ms aborts them (the first at 03:01:00 UTC), or force-terminate them all (a on the job)"
	if p := j.Problems(nil, Query{}, now)[0]; p.WayOut != want {
		t.Errorf("two timeouts: %q, want %q", p.WayOut, want)
	}
	want = "wait a moment: their transaction.timeout.ms ran out by 04:30:00 UTC and the coordinator aborts them at its next check, " +
		"or force-terminate them all (a on the job)"
	if p := j.Problems(nil, Query{}, j.LingeringUntil)[0]; p.WayOut != want {
		t.Errorf("timed out: %q, want %q", p.WayOut, want)
	}
}

// cadenceOf: the median gap between a subtask's recent commits, once two
// gaps above zero are known.
func TestCadenceOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		commits []int64 // seconds
		want    time.Duration
	}{
		{"none", nil, 0},
		{"one commit only", []int64{10}, 0},
		{"one gap", []int64{10, 20}, 0},
		{"two gaps", []int64{10, 20, 30}, 10 * time.Second},
		{"one poll's two commits tell nothing", []int64{10, 10, 20}, 0},
		{"median, not mean", []int64{0, 10, 70, 80}, 10 * time.Second},
		{"lower middle", []int64{0, 10, 30}, 10 * time.Second},
	} {
		var ms []int64
		for _, c := range tc.commits {
			ms = append(ms, c*1000)
		}
		if got := cadenceOf(ms); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// The job's cadence is the median of its subtasks' from History's last
// cadenceCommits commits each; a subtask with no commit yet, or one, adds
// nothing; so does a baseline.
func TestJobCadenceFromHistory(t *testing.T) {
	t0 := time.Unix(100_000, 0)
	s := &Snapshot{Txns: []Txn{{ID: "orders-0-1", State: Ongoing}, {ID: "orders-1-1", State: Ongoing},
		{ID: "orders-2-1", State: Ongoing}, {ID: "orders-3-1", State: Ongoing}}}
	h := NewHistory(100)
	if j := jobNamed(t, Jobs(s, h, t0), "orders"); j.Cadence != 0 {
		t.Fatalf("no history: cadence %v", j.Cadence)
	}
	var evs []Event
	for i := range 40 { // subtask 0 every 10s, the last 16 kept: it slowed from 5s
		gap := 5 * time.Second
		if i >= 20 {
			gap = 10 * time.Second
		}
		t0 = t0.Add(gap)
		evs = append(evs, jobEv(t0, "orders-0-"+strconv.Itoa(i), Committed))
	}
	for i := range 4 { // subtask 1 every 30s
		evs = append(evs, jobEv(t0.Add(time.Duration(i)*30*time.Second), "orders-1-"+strconv.Itoa(i), Committed))
	}
	evs = append(evs, jobEv(t0, "orders-2-1", Committed)) // one commit only
	h.Add(evs)
	j := jobNamed(t, Jobs(s, h, t0), "orders")
	if j.Units[0].Cadence != 10*time.Second || j.Units[1].Cadence != 30*time.Second || j.Units[2].Cadence != 0 || j.Units[3].Cadence != 0 {
		t.Errorf("subtask cadences %v %v %v %v", j.Units[0].Cadence, j.Units[1].Cadence, j.Units[2].Cadence, j.Units[3].Cadence)
	}
	if j.Cadence != 10*time.Second {
		t.Errorf("job cadence %v, want 10s (the lower middle of 10s and 30s)", j.Cadence)
	}
}

// A Grouping is shared by every Jobs call of one refresh: adding History's
// figures never writes into it.
func TestGroupingIsNotWritten(t *testing.T) {
	now := time.Unix(100_000, 0)
	s := &Snapshot{Txns: []Txn{{ID: "orders-0-9", State: Ongoing, StartUnixMs: now.Add(-time.Minute).UnixMilli()}, {ID: "orders-0-10", State: CompleteCommit}}}
	g := Group(s, nil)
	h := NewHistory(10)
	h.Add([]Event{jobEv(now, "orders-0-10", Committed)})
	a := g.Jobs(h, now)
	b := g.Jobs(nil, now)
	if len(a[0].Lingering) != 1 || len(b[0].Lingering) != 1 || !b[0].LastCommit.IsZero() || !b[0].Units[0].LastCommit.IsZero() {
		t.Errorf("with history %+v; without %+v", a[0], b[0])
	}
	if g.jobs[0].Units[0].Lingering != nil || !g.jobs[0].Units[0].LastCommit.IsZero() {
		t.Errorf("the grouping was written: %+v", g.jobs[0].Units[0])
	}
	var none *Grouping
	if none.Jobs(h, now) != nil || len(Group(nil, nil).Jobs(h, now)) != 0 {
		t.Error("no grouping, no jobs")
	}
}

// A run restored from a savepoint older than the newest committed
// checkpoint reuses that checkpoint's ids: its own open transaction, begun
// after the newest commit, is not lingering; what the crashed attempt left
// open, begun before that commit, is. Without the commit's time (the
// snapshot alone says it committed) the checkpoint decides alone.
func TestLingeringBeganBeforeTheNewestCommit(t *testing.T) {
	now := time.Unix(100_000, 0)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	open := func(id string, began time.Time) Txn {
		tx := Txn{ID: id, State: Ongoing, TimeoutMs: 600000, Described: true}
		tx.SetStart(began)
		return tx
	}
	done := func(id string) Txn { return Txn{ID: id, State: CompleteCommit, Described: true} }
	s := &Snapshot{TakenAt: now, Txns: []Txn{
		open("orders-0-1", ago(10*time.Minute)), done("orders-0-3"), // crashed: began before 3 committed
		open("orders-1-2", ago(time.Minute)), done("orders-1-3"), // restored: began after
	}}
	s.Sort()
	h := NewHistory(10)
	h.Add([]Event{jobEv(ago(5*time.Minute), "orders-0-3", Committed), jobEv(ago(5*time.Minute), "orders-1-3", Committed)})
	if j := jobNamed(t, Jobs(s, h, now), "orders"); !slices.Equal(j.Lingering, []string{"orders-0-1"}) {
		t.Errorf("lingering %v, want only orders-0-1 (orders-1-2 began after checkpoint 3 committed)", j.Lingering)
	}
	if j := jobNamed(t, Jobs(s, nil, now), "orders"); !slices.Equal(j.Lingering, []string{"orders-0-1", "orders-1-2"}) {
		t.Errorf("no history: lingering %v, want both", j.Lingering)
	}
}
