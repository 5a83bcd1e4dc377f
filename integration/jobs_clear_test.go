package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/model"
)

// The two ways lingering transactions clear without txnscope: the next run
// of the job fences them, or the coordinator aborts them at their timeout.
// Each scenario starts like TestFlinkJobLingeringAfterRestart (checkpoint 1
// open when the job is killed, a restart at checkpoint 2 that leaves it
// alone) and is watched both by polling and with the coordinators' log
// followed.

const lingerParallelism = 3

// lingerRun is a Flink-like job killed with checkpoint 1 open, then resumed
// at checkpoint 2 without fencing: checkpoint 1's ids linger.
type lingerRun struct {
	topic, prefix string
	ids           []string         // checkpoint 1's, by subtask
	first         map[string]int64 // each lingering transaction's first offset
}

// crashAndResume runs the scenario; timeoutMs is the crashed run's
// transaction.timeout.ms.
func crashAndResume(ctx context.Context, t *testing.T, bootstrap string, adm *kadm.Client, timeoutMs int) lingerRun {
	t.Helper()
	r := lingerRun{topic: topicWith(ctx, t, adm, lingerParallelism), prefix: name(t, "job"), first: map[string]int64{}}
	crashed := startFlink(t, "crashed", bootstrap, "--topic", r.topic, "--prefix", r.prefix,
		"--parallelism", fmt.Sprint(lingerParallelism), "--checkpoint-interval-ms", "60000", "--records", "240",
		"--transaction-timeout-ms", fmt.Sprint(timeoutMs))
	for s := range lingerParallelism {
		id := flinkID(r.prefix, s, 1)
		r.ids = append(r.ids, id)
		r.first[id] = crashed.waitEvent(ctx, "first", id).int64Field(t, 1)
	}
	crashed.kill9(ctx)
	resumed := startFlink(t, "resumed", bootstrap, "--topic", r.topic, "--prefix", r.prefix,
		"--parallelism", fmt.Sprint(lingerParallelism), "--checkpoint-interval-ms", "500", "--records", "5",
		"--transaction-timeout-ms", "300000", "--checkpoints", "2", "--start-checkpoint", "2", "--no-abort-lingering")
	if code := resumed.waitExit(ctx); code != 0 {
		t.Fatalf("the resumed run's exit status %d", code)
	}
	return r
}

// lingerWatch looks at the cluster the two ways the TUI can: polls (with a
// History of their own) and the followed log (the Jobs of its snapshots
// take no History: the states alone say what is lingering).
type lingerWatch struct {
	t       *testing.T
	prefix  string
	polls   *scope
	log     *logScope
	pollJob model.Job
	logJob  model.Job
	snap    *model.Snapshot // the polls' latest
}

func (w *lingerWatch) poll(ctx context.Context) {
	w.t.Helper()
	now := time.Now()
	w.snap = w.polls.poll(ctx)
	w.pollJob = lingerJobOf(model.Jobs(w.snap, w.polls.hist, now), w.prefix)
	w.logJob = lingerJobOf(model.Jobs(w.log.poll(ctx), nil, now), w.prefix)
}

// lingerPatience bounds each wait, well within the test's context, so that
// a failure says what txnscope showed rather than that a poll ran out of time.
const lingerPatience = 60 * time.Second

// until polls both every 200 ms until ok accepts what each shows, and says
// what they showed last when it never does.
func (w *lingerWatch) until(ctx context.Context, what string, ok func(model.Job) bool) time.Time {
	w.t.Helper()
	giveUp := time.After(lingerPatience)
	for {
		w.poll(ctx)
		if ok(w.pollJob) && ok(w.logJob) {
			return time.Now()
		}
		select {
		case <-giveUp:
			w.t.Fatalf("waiting %s for %s\npolls showed: %s\nthe followed log showed: %s",
				lingerPatience, what, w.describe(w.pollJob), w.describe(w.logJob))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (w *lingerWatch) describe(j model.Job) string {
	if j.ID.Name == "" {
		return "no job " + w.prefix
	}
	return fmt.Sprintf("%d ids, newest checkpoint %d, committed %d, open %v, lingering %v, problems %q",
		j.IDs, j.NewestCheckpoint, j.NewestCommitted, j.Open, j.Lingering, j.Problems(w.snap, model.Query{}, time.Now()))
}

// lingerJobOf is prefix's Flink job among jobs, the zero Job when none.
func lingerJobOf(jobs []model.Job, prefix string) model.Job {
	for _, j := range jobs {
		if j.ID == (model.JobID{Family: model.FlinkSink, Name: prefix}) {
			return j
		}
	}
	return model.Job{}
}

// watchLingering starts watching once the crashed run's ids exist (a fresh
// broker has no log before), and waits until both ways show checkpoint 1's
// transactions lingering behind the resumed run's checkpoints 2 and 3.
func watchLingering(ctx context.Context, t *testing.T, bootstrap string, polls *scope, r lingerRun) *lingerWatch {
	t.Helper()
	w := &lingerWatch{t: t, prefix: r.prefix, polls: polls, log: newLogScope(t, bootstrap)}
	w.log.live(ctx)
	w.until(ctx, fmt.Sprintf("checkpoints 2 and 3 committed, %v lingering", r.ids), func(j model.Job) bool {
		return j.NewestCommitted == 3 && slices.Equal(j.Lingering, r.ids)
	})
	if ps := w.pollJob.Problems(w.snap, model.Query{}, time.Now()); len(ps) == 0 || !strings.HasPrefix(ps[0].What, "3 lingering after a restart") {
		t.Errorf("problems %q, want the 3 lingering first", ps)
	}
	return w
}

// checkLingerPins fails unless each subtask's partition has its LSO at
// (pinned) or past (freed) its lingering transaction's first offset.
func checkLingerPins(ctx context.Context, t *testing.T, adm *kadm.Client, r lingerRun, pinned bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // the last markers may still be on their way
	for s, id := range r.ids {
		tp := model.TopicPartition{Topic: r.topic, Partition: int32(s)}
		for {
			hwm, lso := offsetsOf(ctx, t, adm, tp)
			switch {
			case pinned && lso == r.first[id] && hwm > lso:
			case !pinned && lso == hwm:
			case time.Now().Before(deadline):
				time.Sleep(200 * time.Millisecond)
				continue
			case pinned:
				t.Errorf("%s-%d with %s lingering: HWM %d LSO %d, want the LSO held at its first offset %d", tp.Topic, tp.Partition, id, hwm, lso, r.first[id])
			default:
				t.Errorf("%s-%d after %s cleared: HWM %d LSO %d, want them equal", tp.Topic, tp.Partition, id, hwm, lso)
			}
			break
		}
	}
}

// lingerFinished lists the kinds of an id's finished transactions, oldest first.
func lingerFinished(fs []model.FinishedTxn) []model.EventKind {
	var out []model.EventKind
	for _, f := range fs {
		out = append(out, f.Kind)
	}
	return out
}

// lingerEndings lists the kinds of the events that end a transaction.
func lingerEndings(evs []model.Event) []model.EventKind {
	var out []model.EventKind
	for _, e := range evs {
		if e.Kind.Ends() {
			out = append(out, e.Kind)
		}
	}
	return out
}

// TestFlinkJobLingeringFencedByRestart: the lingering transactions of
// checkpoint 1 clear when the job is restarted once more from checkpoint 1,
// as Flink does after restoring a checkpoint: its InitProducerId on the ids
// from that checkpoint on fences the crashed run's producers and aborts
// their transactions. Both the polls and the followed log end each of them
// `fenced`, the lingering count goes to 0 and the partitions are freed.
func TestFlinkJobLingeringFencedByRestart(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	polls := newScope(t, bootstrap)
	polls.poll(ctx)

	r := crashAndResume(ctx, t, bootstrap, adm, 300000)
	w := watchLingering(ctx, t, bootstrap, polls, r)
	checkLingerPins(ctx, t, adm, r, true)

	restored := startFlink(t, "restored", bootstrap, "--topic", r.topic, "--prefix", r.prefix,
		"--parallelism", fmt.Sprint(lingerParallelism), "--checkpoint-interval-ms", "500", "--records", "5",
		"--transaction-timeout-ms", "300000", "--checkpoints", "1", "--start-checkpoint", "1")
	for _, id := range r.ids {
		restored.waitEvent(ctx, "lingering", id) // its probe fenced the id
	}
	// The restored run's own checkpoint 1 is open on the same ids for a
	// while (and lingering by the rule, behind checkpoint 3): its end is
	// the state to judge.
	if code := restored.waitExit(ctx); code != 0 {
		t.Fatalf("the restored run's exit status %d", code)
	}
	w.until(ctx, "no lingering or open transaction left", func(j model.Job) bool {
		return len(j.Lingering) == 0 && len(j.Open) == 0
	})
	if ps := w.pollJob.Problems(w.snap, model.Query{}, time.Now()); len(ps) > 0 {
		t.Errorf("problems %q after the fence, want none", ps)
	}
	// Each id's first transaction is the crashed run's, the second the
	// restored run's checkpoint 1.
	want := []model.EventKind{model.Fenced, model.Committed}
	for _, id := range r.ids {
		if got := lingerFinished(polls.hist.Stats(id).Finished()); !slices.Equal(got, want) {
			t.Errorf("%s: polls ended its transactions %q (events %q), want %q", id, got, polls.kinds(id), want)
		}
		evs := w.log.until(ctx, id, func(evs []model.Event) bool { return len(lingerEndings(evs)) >= len(want) })
		if got := lingerEndings(evs); !slices.Equal(got, want) {
			t.Errorf("%s: the followed log ended its transactions %q (events %s), want %q", id, got, kindsOf(evs), want)
		}
	}
	checkLingerPins(ctx, t, adm, r, false)
}

// TestFlinkJobLingeringTimesOut: nobody fences the lingering transactions
// of checkpoint 1; the coordinator aborts each at its
// transaction.timeout.ms (40 s: they linger once older than 30 s, a live
// transaction's longest while the job's cadence is not known), within the broker's cleanup interval (1 s
// on the test broker). The lingering clears by itself then, not before, the
// followed log says `aborted at timeout`, and the partitions are freed.
func TestFlinkJobLingeringTimesOut(t *testing.T) {
	t.Parallel()
	bootstrap := Bootstrap(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	requireFlinkLike(ctx, t)
	adm := newAdmin(t, bootstrap)
	polls := newScope(t, bootstrap)
	polls.poll(ctx)

	const timeout = 40 * time.Second
	r := crashAndResume(ctx, t, bootstrap, adm, int(timeout/time.Millisecond))
	w := watchLingering(ctx, t, bootstrap, polls, r)
	checkLingerPins(ctx, t, adm, r, true)
	deadlines := map[string]time.Time{} // each lingering transaction's, on the coordinator's clock
	var last time.Time
	for _, id := range r.ids {
		tx := txnOf(t, w.snap, id)
		if tx.Timeout() != timeout || !tx.HasStart() {
			t.Fatalf("%s: timeout %s, start %v; want %s and a start", id, tx.Timeout(), tx.StartTime(), timeout)
		}
		deadlines[id] = tx.StartTime().Add(timeout)
		if deadlines[id].After(last) {
			last = deadlines[id]
		}
	}
	left := time.Until(last)
	if left < time.Second {
		t.Fatalf("the lingering showed only %s before their timeout: the scenario is too slow to tell a clear by timeout from one before", left)
	}
	t.Logf("lingering shown %s before the last deadline", left.Round(time.Millisecond))

	cleared := w.until(ctx, "the lingering aborted at their timeout", func(j model.Job) bool {
		return len(j.Lingering) == 0 && len(j.Open) == 0
	})
	// The test broker looks for timed-out transactions every second
	// (transaction.abort.timed.out.transaction.cleanup.interval.ms, scripts/kafka-up);
	// the abort's own writes take a little, a round of polls both ways more.
	const cleanup, writes, polling = time.Second, time.Second, 5 * time.Second
	t.Logf("cleared in txnscope's view %s after the last deadline", cleared.Sub(last).Round(time.Millisecond))
	if early := last.Sub(cleared); early > 0 {
		t.Errorf("the lingering cleared %s before their timeout: not by the timeout", early)
	}
	if late := cleared.Sub(last); late > cleanup+writes+polling {
		t.Errorf("txnscope showed the lingering cleared %s after their timeout, want within the cleanup interval %s (+%s)", late, cleanup, writes+polling)
	}
	if ps := w.pollJob.Problems(w.snap, model.Query{}, time.Now()); len(ps) > 0 {
		t.Errorf("problems %q after the timeout, want none", ps)
	}
	want := []model.EventKind{model.TimedOut}
	for _, id := range r.ids {
		if got := lingerFinished(polls.hist.Stats(id).Finished()); !slices.Equal(got, want) {
			t.Errorf("%s: polls ended its transactions %q (events %q), want %q", id, got, polls.kinds(id), want)
		}
		evs := w.log.until(ctx, id, func(evs []model.Event) bool { return len(lingerEndings(evs)) > 0 })
		if got := lingerEndings(evs); !slices.Equal(got, want) {
			t.Errorf("%s: the followed log ended its transactions %q (events %s), want %q", id, got, kindsOf(evs), want)
			continue
		}
		// The log's event carries the coordinator's own time of the abort.
		at := ending(t, id, evs).At
		t.Logf("%s aborted %s after its deadline (the coordinator's clock)", id, at.Sub(deadlines[id]).Round(time.Millisecond))
		if d := at.Sub(deadlines[id]); d < 0 || d > cleanup+writes {
			t.Errorf("%s: the log says it was aborted at %s, %s from its deadline %s; want within the cleanup interval %s (+%s)",
				id, at.Format("15:04:05.000"), d, deadlines[id].Format("15:04:05.000"), cleanup, writes)
		}
	}
	checkLingerPins(ctx, t, adm, r, false)
}
