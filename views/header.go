package views

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/model"
)

// StateCount is how many ids are in one state.
type StateCount struct {
	State model.State
	N     int
}

// Summary is what the header says about a snapshot; the ui computes it once
// per refresh, because counting 100,000 ids per frame is not free.
type Summary struct {
	Brokers     int
	Total       int
	Counts      []StateCount // display order, Ongoing always present
	OldestID    string
	OldestStart time.Time // zero when nothing is open
	Hidden      string
	// PIDWidth is the widest producer id/epoch, so the list column can fit
	// it (kfake hands out 19-digit producer ids).
	PIDWidth int
	// Pending is how many ids are listed but not described yet;
	// PendingOpen how many of them are open.
	Pending, PendingOpen int
	// Source is where the states and the history come from.
	Source model.Source
	// Unanswered names the brokers that did not answer the refresh ("" when
	// all did): the header says degraded, not connected.
	Unanswered string
}

// countOrder is the order states are listed in the header.
var countOrder = []model.State{
	model.Ongoing, model.PrepareCommit, model.PrepareAbort, model.PrepareEpochFence,
	model.CompleteCommit, model.CompleteAbort, model.Empty, model.Dead,
}

// Summarize counts s for the header.
func Summarize(s *model.Snapshot) Summary {
	if s == nil {
		return Summary{}
	}
	counts := s.StateCounts()
	out := Summary{Brokers: s.Brokers, Total: len(s.Txns), Hidden: s.Hidden, Source: s.Source,
		Unanswered: model.UnansweredText(s.Unanswered)}
	for _, st := range countOrder {
		if n := counts[st]; n > 0 || st == model.Ongoing {
			out.Counts = append(out.Counts, StateCount{st, n})
		}
		delete(counts, st)
	}
	var unknown []StateCount // states this version does not know
	for st, n := range counts {
		unknown = append(unknown, StateCount{st, n})
	}
	sort.Slice(unknown, func(i, j int) bool { return unknown[i].State.String() < unknown[j].State.String() })
	out.Counts = append(out.Counts, unknown...)
	if t, ok := s.OldestOpen(); ok {
		out.OldestID, out.OldestStart = t.ID, t.StartTime()
	}
	for i := range s.Txns {
		out.PIDWidth = max(out.PIDWidth, producerTextLen(&s.Txns[i]))
		if s.Txns[i].Pending {
			out.Pending++
			if s.Txns[i].State.Open() {
				out.PendingOpen++
			}
		}
	}
	return out
}

// Conn is the state of the connection to the cluster.
type Conn struct {
	Loaded    bool      // a snapshot has arrived
	LastOK    time.Time // when the last successful refresh arrived
	Err       string    // the last refresh's error; "" when it succeeded
	RetryAt   time.Time // when the next attempt starts (set on error)
	Busy      bool      // a refresh is in flight
	BusySince time.Time
	Refresh   time.Duration // the poll interval
	Took      time.Duration // how long the last successful refresh took
	// Stretched: Refresh is longer than asked for, as every refresh lists
	// all the ids (model.PollEvery).
	Stretched bool
}

// Stale reports whether the data shown is not what the cluster says now: the
// last refresh failed, or it is older than two poll intervals.
func (c Conn) Stale(now time.Time) bool {
	return c.Loaded && (c.Err != "" || (c.Refresh > 0 && now.Sub(c.LastOK) > 2*c.Refresh))
}

// PinSummary counts what the partitions and groups views hold, for the
// header: a hanging partition must be seen from every view.
type PinSummary struct {
	Pinned, Hanging, Stuck int
}

// HeaderData is everything the header shows.
type HeaderData struct {
	// Context is the config file's context's label ("" for none), in
	// the context's colour (Styles.Context); Protected marks it.
	Context   string
	Protected bool
	Bootstrap string
	ReadOnly  bool
	Sum       Summary
	Conn      Conn
	Now       time.Time
	Pins      PinSummary
	// Warning is a standing warning about the connection itself (the
	// brokers' TLS certificates not verified), always shown.
	Warning string
	// Flink says which --flink JobManagers did not answer the last reading
	// ("" when all did, or none is given).
	Flink string
}

// HeaderHeight is 2 lines, plus one when there is an error or a note to show.
func HeaderHeight(d HeaderData) int {
	if d.Conn.Err != "" || d.Sum.Hidden != "" || d.Flink != "" {
		return 3
	}
	return 2
}

// Header draws the header in exactly w×HeaderHeight(d).
func Header(d HeaderData, w int, st Styles) string {
	left := st.Title.Render("txnscope") + "  "
	if d.Context != "" {
		badge := " " + escape.Text(d.Context) + " "
		if d.Protected {
			badge += "· protected "
		}
		left += st.Context.Render(badge) + "  "
	}
	if d.ReadOnly {
		left += st.ReadOnly.Render(" read-only ") + "  "
	}
	if d.Warning != "" {
		// Before the bootstrap, so that a narrow terminal cuts that instead.
		left += st.Error.Render("⚠ "+oneLine(d.Warning)) + "  "
	}
	left += st.Bold.Render(d.Bootstrap)
	if d.Conn.Loaded {
		left += st.Dim.Render(fmt.Sprintf(" · %d brokers", d.Sum.Brokers))
	}
	right := connText(d, st)
	if d.Conn.Loaded {
		left += historyText(d.Sum.Source, w-cells(right)-1-cells(left), st)
	}
	lines := []string{Spread(left, right, w), Spread(countsLine(d, st), oldestText(d, st), w)}
	if HeaderHeight(d) == 3 {
		var notes []string
		if d.Conn.Err != "" {
			notes = append(notes, st.Error.Render("error: "+oneLine(d.Conn.Err)))
		}
		if d.Sum.Hidden != "" {
			notes = append(notes, st.Warn.Render(oneLine(d.Sum.Hidden)))
		}
		if d.Flink != "" {
			notes = append(notes, st.Warn.Render("flink: "+oneLine(d.Flink)))
		}
		lines = append(lines, strings.Join(notes, st.Dim.Render(" · ")))
	}
	return Block(lines, w, len(lines))
}

// historyText says where the history comes from, in the longest form that
// fits in room cells (none when even the shortest does not): the reason the
// log is not read goes first, the detail's TRANSACTIONS says it in full.
// Records of the log it skipped are named even while the log is the source.
func historyText(src model.Source, room int, st Styles) string {
	const sep = " · "
	forms := []string{"coordinator log", "log"}
	if !src.Log {
		forms = []string{"polls", "polls"}
	}
	label := st.Dim.Render(sep+"history: ") + st.Bold.Render(forms[0])
	long := cells(sep + "history: " + forms[0])
	if why := oneLine(src.Why); why != "" && !src.Log && room >= long+cells(sep)+12 {
		return label + st.Dim.Render(sep+Clip(why, room-long-cells(sep)))
	}
	if skipped := oneLine(src.Unread); skipped != "" && src.Log && room >= long+cells(sep)+12 {
		return label + st.Warn.Render(sep+Clip(skipped, room-long-cells(sep)))
	}
	switch {
	case room >= long:
		return label
	case room >= cells(sep+"history: "+forms[1]):
		return st.Dim.Render(sep+"history: ") + st.Bold.Render(forms[1])
	case room >= cells(sep+forms[1]):
		return st.Dim.Render(sep) + st.Bold.Render(forms[1])
	}
	return ""
}

func connText(d HeaderData, st Styles) string {
	c, now := d.Conn, d.Now
	var parts []string
	switch {
	case c.Err != "":
		parts = append(parts, st.Error.Render("✗ disconnected"))
	case !c.Loaded:
		parts = append(parts, st.Dim.Render("connecting…"))
	case d.Sum.Unanswered != "":
		parts = append(parts, st.Warn.Render("◐ degraded: "+d.Sum.Unanswered+" not answering"))
	default:
		parts = append(parts, st.Good.Render("● connected"))
	}
	if c.Stale(now) {
		parts = append(parts, st.Stale.Render(" STALE ")+st.Dim.Render(" data "+Dur(now.Sub(c.LastOK))+" old"))
	} else if c.Loaded {
		parts = append(parts, st.Dim.Render("refreshed "+Dur(now.Sub(c.LastOK))+" ago"))
	}
	if c.Stretched && c.Loaded {
		how := " ids listed"
		if d.Sum.Source.Log {
			how = " ids"
		}
		parts = append(parts, st.Dim.Render("every "+tenths(c.Refresh)+" at "+Count(d.Sum.Total)+how))
	}
	switch {
	case d.Sum.Pending == 0 || !c.Loaded:
	case d.Sum.Source.Reading && d.Sum.PendingOpen == 0:
		// The log describes them once it is read: nothing is asked meanwhile.
		parts = append(parts, st.Dim.Render(Count(d.Sum.Pending)+" of "+Count(d.Sum.Total)+" described once the log is read"))
	default:
		parts = append(parts, st.Warn.Render("describing "+Count(d.Sum.Pending)+" of "+Count(d.Sum.Total)))
	}
	if c.Took > c.Refresh && c.Refresh > 0 && c.Err == "" {
		// Slower than the interval: every refresh starts as soon as the last
		// one is in, and the data is as old as a refresh takes.
		parts = append(parts, st.Warn.Render("refresh "+tenths(c.Took)+" > "+tenths(c.Refresh)))
	}
	switch {
	case c.Busy && now.Sub(c.BusySince) >= c.Refresh && c.Refresh > 0:
		parts = append(parts, st.Warn.Render("refreshing for "+Dur(now.Sub(c.BusySince))))
	case c.Err != "" && !c.Busy:
		parts = append(parts, st.Warn.Render("retrying in "+seconds(c.RetryAt.Sub(now))))
	case c.Err != "":
		parts = append(parts, st.Warn.Render("retrying…"))
	}
	return strings.Join(parts, st.Dim.Render(" · "))
}

// tenths is a duration in seconds to one decimal, without a trailing ".0".
func tenths(d time.Duration) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + "s"
}

// seconds rounds up, so a countdown never says 0s before it fires.
func seconds(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	return fmt.Sprintf("%ds", (d+time.Second-1)/time.Second)
}

func countsLine(d HeaderData, st Styles) string {
	if !d.Conn.Loaded {
		return st.Dim.Render("no data yet")
	}
	var b strings.Builder
	b.WriteString(st.Bold.Render(Count(d.Sum.Total)) + st.Dim.Render(" ids"))
	for _, c := range d.Sum.Counts {
		b.WriteString(st.Dim.Render(" · "))
		label := stateName(c.State) // a state this version does not know is the broker's word
		if c.N > 0 {
			label = StateStyle(c.State, &st).Render(label)
		} else {
			label = st.Dim.Render(label)
		}
		b.WriteString(label + " " + Count(c.N))
	}
	if ps := d.Pins; ps.Pinned > 0 {
		b.WriteString(st.Dim.Render(" · ") + st.Warn.Render(Count(ps.Pinned)+" pinned"))
		if ps.Stuck > 0 {
			b.WriteString(st.Dim.Render(" · ") + st.Danger.Render(Count(ps.Stuck)+plural(ps.Stuck, " group", " groups")+" stuck"))
		}
	}
	return b.String()
}

// oldestText is the age of the oldest open transaction, which says more about
// a stuck consumer than any count.
func oldestText(d HeaderData, st Styles) string {
	// A hanging partition is an alarm: it stays on the side that never gives way.
	var hanging string
	if d.Conn.Loaded && d.Pins.Hanging > 0 {
		hanging = st.Alarm.Render(" " + Count(d.Pins.Hanging) + " HANGING ")
	}
	if !d.Conn.Loaded || d.Sum.OldestStart.IsZero() {
		return hanging
	}
	if hanging != "" {
		hanging += st.Dim.Render(" · ")
	}
	return hanging + st.Dim.Render("oldest open ") + st.Bold.Render(Dur(d.Now.Sub(d.Sum.OldestStart))) +
		st.Dim.Render(" "+ClipMiddle(name(d.Sum.OldestID), 24))
}

// oneLine keeps an error or a note, which may quote the cluster, on one line
// and harmless: line breaks and anything else a terminal could act on are
// written out (escape.Line), so ids that differ by them stay apart.
func oneLine(s string) string { return escape.Line(s) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// FlinkNote is the header's word on the JobManagers of v that did not
// answer ("" when all did, or v is nil).
func FlinkNote(v *model.FlinkView) string {
	if v == nil {
		return ""
	}
	var bad []string
	for _, e := range v.Errs {
		if e != "" {
			bad = append(bad, e)
		}
	}
	dirs := retainedNotes(v)
	switch {
	case len(bad) == 0 && len(dirs) == 0:
		return ""
	case len(bad) == 0:
		return strings.Join(dirs, "; ")
	case len(bad) == 1:
		return strings.Join(append(bad, dirs...), "; ")
	}
	return strings.Join(append([]string{fmt.Sprintf("%d of %d JobManagers do not answer; %s", len(bad), len(v.Errs), bad[0])}, dirs...), "; ")
}

// retainedNotes says which --flink-checkpoints directories could not be
// read, or hold entries that could not be: their verdicts are unknown.
func retainedNotes(v *model.FlinkView) []string {
	var out []string
	for _, prefix := range slices.Sorted(maps.Keys(v.Retained)) {
		r := v.Retained[prefix]
		n := len(r.Problems)
		for _, j := range r.Jobs {
			n += len(j.Problems)
		}
		switch {
		case r.Err != "":
			out = append(out, fmt.Sprintf("--flink-checkpoints %s: %s: %s", prefix, r.Dir, r.Err))
		case n == 1:
			out = append(out, fmt.Sprintf("--flink-checkpoints %s: an entry of %s cannot be read or understood", prefix, r.Dir))
		case n > 1:
			out = append(out, fmt.Sprintf("--flink-checkpoints %s: %d entries of %s cannot be read or understood", prefix, n, r.Dir))
		}
	}
	// An ended job's own checkpoint, where Flink says it is.
	for _, id := range slices.Sorted(maps.Keys(v.External)) {
		if r := v.External[id]; r.Err != "" {
			out = append(out, fmt.Sprintf("Flink job %s's checkpoint %s: %s", id, r.Dir, r.Err))
		}
	}
	return out
}
