package views

import (
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/txnscope/txnscope/model"
)

func TestElapsed(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0ms"}, {80 * time.Millisecond, "80ms"}, {999 * time.Millisecond, "999ms"},
		{time.Second, "1s"}, {1250 * time.Millisecond, "1.2s"}, {21200 * time.Millisecond, "21.2s"},
		{71 * time.Second, "1m11s"},
	} {
		if got := Elapsed(c.d); got != c.want {
			t.Errorf("Elapsed(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// TestHistoryText: the header says where the history comes from in the
// longest form that fits, the reason first to go, nothing when nothing fits.
func TestHistoryText(t *testing.T) {
	logSrc := model.Source{Log: true}
	denied := model.Source{Why: "no READ on __transaction_state"}
	for _, c := range []struct {
		name string
		src  model.Source
		room int
		want string
	}{
		{"log, room", logSrc, 40, " · history: coordinator log"},
		{"log, short", logSrc, 20, " · history: log"},
		{"log, shortest", logSrc, 6, " · log"},
		{"log, none", logSrc, 5, ""},
		{"polls with reason", denied, 60, " · history: polls · no READ on __transaction_state"},
		{"polls, reason clipped", denied, 40, " · history: polls · no READ on __transa…"},
		{"polls, no room for the reason", denied, 25, " · history: polls"},
		{"polls, shortest", denied, 10, " · polls"},
		{"polls, none", denied, 7, ""},
		{"polls without reason", model.Source{}, 60, " · history: polls"},
		{"a reason is one line", model.Source{Why: "a\nb"}, 60, ` · history: polls · a\nb`},
		// Records of the log it skipped are named while the log is the source.
		{"log, skipped records", model.Source{Log: true, Unread: "1 record of __transaction_state txnscope cannot read: partition 3 offset 17"}, 60,
			" · history: coordinator log · 1 record of __transaction_sta…"},
		{"log, no room for the skipped records", model.Source{Log: true, Unread: "1 record"}, 35, " · history: coordinator log"},
	} {
		got := ansi.Strip(historyText(c.src, c.room, PlainStyles()))
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if cells(got) > c.room {
			t.Errorf("%s: %d cells in %d", c.name, cells(got), c.room)
		}
	}
}

// TestHeaderHistoryOnlyOnceLoaded: before the first snapshot nothing is
// known of the source.
func TestHeaderHistoryOnlyOnceLoaded(t *testing.T) {
	d := HeaderData{Bootstrap: "b:9092", Sum: Summary{Source: model.Source{Log: true}}}
	if got := ansi.Strip(Header(d, 160, PlainStyles())); strings.Contains(got, "history") {
		t.Errorf("header before loading: %q", got)
	}
	d.Conn.Loaded = true
	if got := ansi.Strip(Header(d, 160, PlainStyles())); !strings.Contains(got, "· history: coordinator log") {
		t.Errorf("header: %q", got)
	}
}

// TestTxnsSection: the counts on one line when they fit, on two otherwise;
// what the source did not tell is "?", an abort the log reports plainly is
// its producer's.
func TestTxnsSection(t *testing.T) {
	h := model.NewHistory(8)
	at := time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)
	h.Add([]model.Event{
		{At: at, ID: "a", Kind: model.Aborted, ProducerID: 5, ProducerEpoch: 1, Logged: true, Begun: at.Add(-1500 * time.Millisecond), Parts: 3},
		{At: at.Add(time.Minute), ID: "a", Kind: model.Committed, ProducerID: 5, ProducerEpoch: 2},
	})
	d := DetailData{Stats: h.Stats("a"), Since: at.Add(-time.Hour), Now: at.Add(2 * time.Minute), Loc: time.UTC,
		Source: model.Source{Log: true}}
	wide := ansi.Strip(strings.Join(txnsSection(d, 100, PlainStyles()), "\n"))
	for _, want := range []string{
		" TRANSACTIONS · from the coordinator log",
		"   1 commits · 1 aborts since 02:00 · last 5 min 1/1 · last 60 min 1/1",
		"03:01:00        ?  committed               ?  5/2",
		"   02:59:58  03:00:00     1.5s  aborted by producer     3  5/1",
	} {
		if !strings.Contains(wide, want) {
			t.Errorf("lacks %q:\n%s", want, wide)
		}
	}
	if !strings.Contains(wide, "   ?         03:01:00") {
		t.Errorf("an unknown begin is not ?:\n%s", wide)
	}
	narrow := txnsSection(d, 60, PlainStyles())
	if ansi.Strip(narrow[1]) != "   1 commits · 1 aborts since 02:00" || ansi.Strip(narrow[2]) != "   last 5 min 1/1 · last 60 min 1/1" {
		t.Errorf("narrow counts: %q / %q", narrow[1], narrow[2])
	}
}

func TestForceTerminatedIsDanger(t *testing.T) {
	st := PlainStyles()
	st.Danger = NewInk(lipgloss.NewStyle().Bold(true))
	st.Dim = NewInk(lipgloss.NewStyle().Faint(true))
	if got := EventStyle(model.ForceTerminated, &st).Render("x"); got != st.Danger.Render("x") || got == "x" {
		t.Errorf("force-terminated is %q, not danger", got)
	}
	for _, k := range []model.EventKind{model.Added, model.PreparedCommit, model.PreparedAbort, model.Initialized, model.Expired} {
		if got := EventStyle(k, &st).Render("x"); got != st.Dim.Render("x") || got == "x" {
			t.Errorf("%s is %q, not dim", k, got)
		}
	}
}

// TestHeaderDegraded: a refresh some brokers did not answer says degraded,
// and which, where it would say connected.
func TestHeaderDegraded(t *testing.T) {
	d := HeaderData{Bootstrap: "b:9092", Conn: Conn{Loaded: true}, Sum: Summary{Brokers: 3,
		Unanswered: model.UnansweredText([]model.BrokerError{{ID: 2}, {ID: 3}})}}
	got := ansi.Strip(Header(d, 160, PlainStyles()))
	if !strings.Contains(got, "◐ degraded: brokers 2, 3 not answering") || strings.Contains(got, "connected") {
		t.Errorf("header: %q", got)
	}
}

// TestHeaderStretched: a refresh interval stretched by the ids every poll lists is said, with
// the count that stretched it, and STALE waits for two of those intervals.
func TestHeaderStretched(t *testing.T) {
	now := time.Date(2026, 12, 2, 3, 0, 0, 0, time.UTC)
	conn := Conn{Loaded: true, LastOK: now.Add(-6 * time.Second), Refresh: 5 * time.Second, Stretched: true}
	d := HeaderData{Bootstrap: "b:9092", Conn: conn, Sum: Summary{Brokers: 3, Total: 500000}, Now: now}
	got := ansi.Strip(Header(d, 200, PlainStyles()))
	if !strings.Contains(got, "every 5s at 500,000 ids listed") || strings.Contains(got, "STALE") {
		t.Errorf("header: %q", got)
	}
	d.Conn.Stretched = false
	if got := ansi.Strip(Header(d, 200, PlainStyles())); strings.Contains(got, "every") {
		t.Errorf("header without a stretched interval: %q", got)
	}
}
