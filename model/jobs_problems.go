package model

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ProblemKind names a job-level problem (the JSON's problems[].kind).
type ProblemKind string

const (
	ProblemLingering     ProblemKind = "lingering"
	ProblemBehind        ProblemKind = "subtask_behind"
	ProblemNotCommitting ProblemKind = "not_committing"
	ProblemPrefixShared  ProblemKind = "prefix_shared"
	ProblemTimeoutShort  ProblemKind = "timeout_below_interval"
	ProblemTimeoutLong   ProblemKind = "timeout_above_max"
	ProblemCrashed       ProblemKind = "crashed_not_restarted"
	ProblemCrashLoop     ProblemKind = "crash_loop"
	ProblemEpochRotation ProblemKind = "epoch_exhaustion"
)

// crashLoopMinutes is how many of the last 5 minutes with a fence or a
// timeout make a crash loop: one restart fences its predecessor's
// transactions within a second, a job that stops has its transactions time
// out at once.
const crashLoopMinutes = 3

// crashLoopRounds is how many transactions of one subtask, each begun after
// the one before was lost to a timeout or a fence, make a crash loop sooner:
// one crash loses what was open (one round), a restore fences it (the
// same round); a third loss in a row is a job that keeps losing.
const crashLoopRounds = 3

// Problem is one thing wrong with a job: What in a line, Why it matters
// and WayOut, what to do about it.
type Problem struct {
	Kind              ProblemKind
	What, Why, WayOut string
}

// The "not committing" rule. With the checkpoint interval given, a job with
// open transactions and no commit for longer than 2× the interval is not
// committing (a Flink sink commits once per checkpoint). Without it, the
// job's own cadence stands in (Job.Cadence, the median gap between its
// subtasks' recent commits): no commit for cadenceFactor× that, and at
// least minNotCommitting, since polls see commits only at each refresh and a
// slow refresh must not look like a stalled job. A job with no open
// transaction is idle, not stalled; one with no commit seen, or no cadence
// known yet, is not judged.
const (
	cadenceFactor    = 3
	minNotCommitting = 30 * time.Second
)

// Problems says what is wrong with the job, most urgent first: lingering
// transactions, a subtask behind, no commit for too long, a shared prefix
// (before the crash loop it causes), a crash loop, timeouts against the
// checkpoint interval (q) and the brokers' maximum (s).
func (j Job) Problems(s *Snapshot, q Query, now time.Time) []Problem {
	var out []Problem
	crashed, isCrashed := j.crashed(now, q.Loc)
	switch {
	case isCrashed:
		out = append(out, crashed)
	case len(j.Lingering) > 0:
		out = append(out, j.lingeringProblem(now, q.Loc))
	}
	if len(j.Orphaned) > 0 {
		out = append(out, j.orphanProblem(now, q.Loc))
	}
	for _, u := range j.Units {
		if u.Behind {
			out = append(out, Problem{Kind: ProblemBehind,
				What: fmt.Sprintf("subtask %d behind: committed checkpoint %d, the job %d", u.Subtask, u.NewestCommitted, j.NewestCommitted),
				Why: fmt.Sprintf("its newest committed checkpoint trails the job's by %d (one is the checkpoint committing now): its commits fail or stall, "+
					"and read_committed consumers of its partitions wait", j.NewestCommitted-u.NewestCommitted),
				WayOut: fmt.Sprintf("look at subtask %d's open transaction (enter on the job) and at the subtask in Flink's checkpoint history and task manager log", u.Subtask)})
		}
	}
	// Orphans are why a job that moved on commits nothing here.
	if p, ok := j.notCommitting(q, now); ok && !isCrashed && j.ID.Family != StreamsApp && len(j.Orphaned) < len(j.Open) {
		out = append(out, p)
	}
	if p, ok := j.stalled(now, q.Loc); ok && !isCrashed {
		out = append(out, p)
	}
	out = append(out, j.goneInstances(now, q.Loc)...)
	switch {
	case j.Sequences != "":
		out = append(out, Problem{Kind: ProblemPrefixShared,
			What: "prefix shared by two jobs: " + j.Sequences,
			Why: "two runs write the same subtask's ids at once, on checkpoints far apart: a second job uses this transactional-id prefix. " +
				"Its start fenced the first one's open transaction; from then on both commit side by side, and each one's next start " +
				"fences the other again (with POOLING they fence each other all the time)",
			WayOut: "give each job a transactional-id prefix of its own (KafkaSink's setTransactionalIdPrefix) and restart the one that changed; " +
				"do not end either one's transactions from here: both are live"})
	case j.poolsFence(now):
		out = append(out, Problem{Kind: ProblemPrefixShared,
			What: fmt.Sprintf("prefix likely shared by two POOLING jobs: %d transactions on its slots ended uncommitted in %s, two slots of a subtask open at once",
				j.QuietEnds, short(now.Sub(j.QuietSince).Round(time.Second))),
			Why: "two POOLING jobs on one prefix re-initialize the same slot ids, so each fences the other's open transaction and every commit fails; " +
				"Flink logs only a WARN (\"producer is already fenced\") and goes on, and nothing reaches read_committed consumers. " +
				"A single job whose every commit fails for another reason would look the same here: txnscope cannot tell the two producers apart",
			WayOut: "look for a second job with this transactional-id prefix (both jobs' TaskManager logs name these ids); give each job a prefix of its own; " +
				"do not end these transactions from here: their producers are live"})
	case j.Shared:
		out = append(out, Problem{Kind: ProblemPrefixShared,
			What: fmt.Sprintf("prefix looks shared by two jobs (%d takeovers)", j.Takeovers),
			Why: fmt.Sprintf("its ids were taken over by another producer again and again in the last %s: two jobs (or a crash-looping one) "+
				"use one transactional-id prefix and fence each other's transactions", fmtWindow(CollisionWindow)),
			WayOut: "give each job a transactional-id prefix of its own (KafkaSink's setTransactionalIdPrefix) and restart the one that changed"})
	}
	if j.LossMinutes >= crashLoopMinutes || j.LossRounds >= crashLoopRounds {
		losses := fmt.Sprintf("%d %s and %d %s", j.Timeouts5m, plural(j.Timeouts5m, "timeout", "timeouts"), j.Fences5m, plural(j.Fences5m, "fence", "fences"))
		what := fmt.Sprintf("transactions ended by others, minute after minute: %s in %d of the last 5 minutes", losses, j.LossMinutes)
		if j.LossMinutes < crashLoopMinutes {
			what = fmt.Sprintf("transactions ended by others, run after run: %s in 5 minutes, a subtask's %d in a row each begun after the last was lost",
				losses, j.LossRounds)
		}
		p := Problem{Kind: ProblemCrashLoop, What: what,
			Why: "a job whose checkpoints take longer than transaction.timeout.ms has each transaction aborted at its timeout " +
				"(Flink 1.20 then fails and restarts; Flink 2.2 logs \"Unable to commit transaction\" and goes on, its output lost); " +
				"a crash-looping job fences its previous run's transactions at every restart",
			WayOut: "look at the job's checkpoint durations and exceptions in Flink: raise transaction.timeout.ms above the longest checkpoint, " +
				"or find why the job restarts (a second job on the same prefix fences it)"}
		if j.Fences5m > j.Timeouts5m {
			p.Why = "each run's transactions are fenced by an InitProducerId on the same ids: a second job on this transactional-id prefix " +
				"(two POOLING jobs fence each other's every transaction, many times a minute), or this job restarting again and again, " +
				"each restart fencing what the last one left open; txnscope cannot tell the two apart"
			p.WayOut = "look in Flink for a second job with this transactional-id prefix and at this job's restarts and exceptions; " +
				"give each job a prefix of its own; do not end these transactions from here: their producers are live"
		}
		if j.Commits5m == 0 {
			p.Why = "nothing committed in 5 minutes; " + p.Why
		}
		out = append(out, p)
	}
	if interval, said := j.interval(q); interval > 0 && j.MinTimeoutMs > 0 && time.Duration(j.MinTimeoutMs)*time.Millisecond < 2*interval {
		out = append(out, Problem{Kind: ProblemTimeoutShort,
			What: fmt.Sprintf("timeout %s below 2× the checkpoint interval %s", ms(j.MinTimeoutMs), said),
			Why: "a checkpoint's transaction stays open for an interval and the checkpoint's own time: the coordinator may abort it " +
				"at its timeout before the checkpoint completes, and its records are lost to read_committed consumers",
			WayOut: "raise the sink's transaction.timeout.ms well above the checkpoint interval (and the longest checkpoint), " +
				"within the brokers' transaction.max.timeout.ms"})
	}
	if j.ID.Family == FlinkSink && j.Epoch.Warn(now) {
		out = append(out, j.epochProblem(now))
	}
	if s != nil && s.BrokerMaxTimeoutMs > 0 && int64(j.MaxTimeoutMs) > s.BrokerMaxTimeoutMs {
		out = append(out, Problem{Kind: ProblemTimeoutLong,
			What: fmt.Sprintf("timeout %s above the brokers' transaction.max.timeout.ms %s", ms(j.MaxTimeoutMs), ms(int32(min(s.BrokerMaxTimeoutMs, 1<<31-1)))),
			Why:  "its ids were initialized when the maximum was higher; the brokers refuse their next InitProducerId (a restart) with InvalidTxnTimeoutException",
			WayOut: "lower the sink's transaction.timeout.ms to at most the brokers' transaction.max.timeout.ms, " +
				"or raise that maximum on every broker"})
	}
	return out
}

// The POOLING shared-prefix rule: a healthy POOLING subtask has one slot
// open, and a second only between a checkpoint's barrier and its commit;
// its transactions end by commits. Two jobs on its slots keep both open
// and end each other's transactions, none committed, for poolsFenceFor and
// at least poolsFenceEnds per subtask.
const (
	poolsFenceFor  = 20 * time.Second
	poolsFenceEnds = 2
)

func (j Job) poolsFence(now time.Time) bool {
	if !j.Pooling || j.QuietSince.IsZero() || now.Sub(j.QuietSince) < max(poolsFenceFor, cadenceFactor*j.Cadence) ||
		j.QuietEnds < poolsFenceEnds*max(j.Tasks, 1) {
		return false
	}
	return slices.ContainsFunc(j.Units, func(u Unit) bool { return !u.Probe && len(u.Open) >= 2 })
}

// interval is the job's checkpoint interval: --checkpoint-interval when
// given, else what Flink's REST API says, else its commit cadence (a sink
// commits once per checkpoint), and how to say it.
func (j Job) interval(q Query) (time.Duration, string) {
	if q.CheckpointInterval > 0 {
		return q.CheckpointInterval, short(q.CheckpointInterval)
	}
	if j.Flink != nil && j.Flink.Job.Interval() > 0 {
		return j.Flink.Job.Interval(), short(j.Flink.Job.Interval()) + " (Flink's)"
	}
	if j.ID.Family == FlinkSink && j.Cadence > 0 {
		c := j.Cadence.Round(100 * time.Millisecond)
		return c, short(c) + " (its commit cadence)"
	}
	return 0, ""
}

func ms(v int32) string { return short(time.Duration(v) * time.Millisecond) }

// short is d without its zero tail: 1h, not 1h0m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// lingeringProblem says how many linger, what they pin and block, and when
// the coordinator ends them by itself.
func (j Job) lingeringProblem(now time.Time, loc *time.Location) Problem {
	n := len(j.Lingering)
	p := Problem{Kind: ProblemLingering, What: fmt.Sprintf("%d lingering after a restart", n)}
	pins := j.LingeringPins()
	p.Why = fmt.Sprintf("open for over %s, longer than the job's live transactions last, and begun before one of their subtask that "+
		"committed since: no run drives them (a restored Flink job ends its predecessor's within a second)", short(j.liveFor()))
	if len(pins) > 0 {
		var parts, groups []string
		for _, pin := range pins {
			parts = append(parts, fmt.Sprintf("%s-%d", pin.Topic, pin.Partition))
			for _, g := range pin.Groups {
				if !containsString(groups, g) {
					groups = append(groups, g)
				}
			}
		}
		slices.Sort(groups)
		p.Why += fmt.Sprintf("; they pin %d %s (hold the LSO of %s)", len(pins), plural(len(pins), "partition", "partitions"), strings.Join(parts, ", "))
		if len(groups) > 0 {
			p.Why += fmt.Sprintf(", where read_committed %s %s %s", plural(len(groups), "group", "groups"),
				strings.Join(groups, ", "), plural(len(groups), "waits", "wait"))
		}
	}
	wait := "wait until transaction.timeout.ms aborts them"
	switch {
	case j.LingeringUntil.IsZero():
	case !now.Before(j.LingeringUntil):
		wait = fmt.Sprintf("wait a moment: their transaction.timeout.ms ran out by %s and the coordinator aborts them at its next check",
			clock(j.LingeringUntil, loc))
	default:
		wait = fmt.Sprintf("wait until %s (in %s), when transaction.timeout.ms aborts them", clock(j.LingeringUntil, loc), short(until(now, j.LingeringUntil)))
		if j.LingeringFrom.Before(j.LingeringUntil) {
			wait += fmt.Sprintf(" (the first at %s)", clock(j.LingeringFrom, loc))
		}
	}
	p.WayOut = wait + ", or force-terminate them all (a on the job)"
	return p
}

// notCommitting applies the rule above.
func (j Job) notCommitting(q Query, now time.Time) (Problem, bool) {
	if len(j.Open) == 0 || j.LastCommit.IsZero() {
		return Problem{}, false
	}
	idle := now.Sub(j.LastCommit)
	p := Problem{Kind: ProblemNotCommitting,
		WayOut: "look at the job's checkpoints in Flink (failing or expiring, backpressure): the open transactions commit when a checkpoint completes"}
	switch {
	case q.CheckpointInterval > 0:
		if idle <= 2*q.CheckpointInterval {
			return Problem{}, false
		}
		p.What = fmt.Sprintf("not committing: no commit for %s (checkpoint interval %s)", short(idle.Round(time.Second)), short(q.CheckpointInterval))
		p.Why = "no subtask committed for longer than twice the checkpoint interval while transactions are open: " +
			"checkpoints fail or hang, and read_committed consumers see nothing new"
	case j.Cadence > 0:
		if idle <= max(cadenceFactor*j.Cadence, minNotCommitting) {
			return Problem{}, false
		}
		p.What = fmt.Sprintf("not committing: no commit for %s (it committed every %s)", short(idle.Round(time.Second)), short(j.Cadence.Round(time.Second)))
		p.Why = fmt.Sprintf("no subtask committed for over %d× the job's recent gap between commits while transactions are open: "+
			"checkpoints fail or hang, and read_committed consumers see nothing new (--checkpoint-interval judges against the interval instead)", cadenceFactor)
	default:
		return Problem{}, false
	}
	return p, true
}

// clock is a time of day in loc, named: the screen's zone, or UTC when nil.
func clock(t time.Time, loc *time.Location) string {
	if loc == nil {
		return t.UTC().Format("15:04:05 UTC")
	}
	return t.In(loc).Format("15:04:05 MST")
}

// until is how long from now to t, 0 when past, to the second.
func until(now, t time.Time) time.Duration { return max(t.Sub(now), 0).Round(time.Second) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// crashed is the "crashed, not restarted" problem: transactions open for
// longer than the job's live ones last, none committed since they began
// (nothing lingers), no commit for as long, and their producers silent
// where the brokers say when they last wrote. A job whose
// checkpoints merely fail goes on writing into its transactions.
func (j Job) crashed(now time.Time, loc *time.Location) (Problem, bool) {
	live := j.liveFor()
	// Flink's word, when its REST API was asked: a job it runs is not
	// crashed; one it says FAILED or CANCELED is, whatever the brokers say
	// of its producers.
	flinkSays := ""
	if j.Flink != nil && j.Flink.Job.State != "" {
		if FlinkRunning(j.Flink.Job.State) {
			return Problem{}, false
		}
		flinkSays = j.Flink.Job.State
	}
	// Lingering says a run committed after these began: it was restarted.
	if len(j.Open) == 0 || len(j.Lingering) > 0 || (len(j.Pinned) == 0 && flinkSays == "") || j.Oldest.ID == "" {
		return Problem{}, false
	}
	if !j.LastCommit.IsZero() && now.Sub(j.LastCommit) < live {
		return Problem{}, false
	}
	var quiet time.Time
	said := false
	for _, p := range j.Pinned {
		switch j.pinSilence(p, now) {
		case -1:
			if flinkSays == "" {
				return Problem{}, false
			}
		case 1:
			said = true
		}
		quiet = latest(quiet, time.UnixMilli(p.LastWriteMs))
	}
	if !said && flinkSays == "" {
		return Problem{}, false
	}
	var from, last time.Time
	for _, u := range j.Units {
		for _, o := range u.open {
			if o.ending || o.start.IsZero() || (now.Sub(o.start) < live && flinkSays == "") {
				return Problem{}, false
			}
			if o.deadline.IsZero() {
				continue
			}
			if from.IsZero() || o.deadline.Before(from) {
				from = o.deadline
			}
			last = latest(last, o.deadline)
		}
	}
	n := len(j.Open)
	p := Problem{Kind: ProblemCrashed,
		What: fmt.Sprintf("crashed, not restarted: %d open, nothing written for %s", n, short(now.Sub(quiet).Round(time.Second)))}
	commit := "no commit seen"
	if !j.LastCommit.IsZero() {
		commit = "no commit since " + clock(j.LastCommit, loc)
	}
	p.Why = commit + " and nothing written into its open transactions: no run drives them. They stay open, pinning their partitions"
	if flinkSays != "" {
		p.What = fmt.Sprintf("crashed, not restarted: %d open, Flink says %s", n, flinkSays)
		p.Why = fmt.Sprintf("%s: Flink's JobManager (%s) reports job %s %s, and %s. No run drives its open transactions: they stay open, pinning their partitions",
			commit, j.Flink.Job.Source, j.Flink.Job.Name, flinkSays, "none of its tasks runs")
	}
	if len(j.StuckGroups) > 0 {
		p.Why += fmt.Sprintf(" (read_committed %s %s %s)", plural(len(j.StuckGroups), "group", "groups"), strings.Join(j.StuckGroups, ", "),
			plural(len(j.StuckGroups), "waits", "wait"))
	}
	switch {
	case last.IsZero():
		p.Why += ", until transaction.timeout.ms aborts them"
	case !now.Before(last):
		p.Why += fmt.Sprintf(", until the coordinator aborts them at its next check (their timeout ran out by %s)", clock(last, loc))
	default:
		p.Why += fmt.Sprintf(", until transaction.timeout.ms aborts them at %s (in %s)", clock(last, loc), short(until(now, last)))
		if from.Before(last) {
			p.Why += fmt.Sprintf(", the first at %s", clock(from, loc))
		}
	}
	p.Why += "; a transaction whose checkpoint had completed loses its records then"
	switch j.ID.Family {
	case FlinkSink:
		p.WayOut = "restart the job from its latest checkpoint: on restore Flink commits what the checkpoint holds and aborts the rest; " +
			"if it will not be restarted, force-terminate them (a on each, from enter on a subtask) or let the timeout abort them, " +
			"and its last checkpoint's records are lost"
		if said := verdictsSaid(j.OpenVerdicts); said != "" {
			// Flink's checkpoints are known: the job can be resolved here,
			// each transaction as Flink would have ended it.
			p.WayOut = "restart the job from its latest checkpoint: on restore Flink commits what the checkpoint holds and aborts the rest; " +
				"if it will not be restarted, resolve it (C on the job: commits what Flink checkpointed, force-terminates the rest) " +
				"rather than let the timeout abort them all; " + said
		}
	case StreamsApp:
		p.WayOut = "restart the application's instance: its producers fence and abort these; if it will not come back, force-terminate them (a on each)"
	default:
		p.WayOut = "restart the producer that owns these ids, or force-terminate them (a on each) if it will not come back"
	}
	return p, true
}

// verdictsSaid sums up what the verdicts say aborting would lose ("" when
// there are none).
func verdictsSaid(vs []Verdict) string {
	if len(vs) == 0 {
		return ""
	}
	var done, notDone, unknown []string
	cps := map[int64]bool{}
	for _, v := range vs {
		switch v.Kind {
		case Checkpointed:
			done = append(done, v.ID)
			cps[v.CompletedIn] = true
		case NotCheckpointed:
			notDone = append(notDone, v.ID)
		default:
			unknown = append(unknown, v.ID)
		}
	}
	var parts []string
	if len(done) > 0 {
		ns := slices.Sorted(maps.Keys(cps))
		var names []string
		for _, n := range ns {
			names = append(names, strconv.FormatInt(n, 10))
		}
		parts = append(parts, fmt.Sprintf("%d belong to completed checkpoint %s: their records are in Flink's state, restoring from it commits them and aborting loses them",
			len(done), strings.Join(names, ", ")))
	}
	if len(notDone) > 0 {
		parts = append(parts, fmt.Sprintf("%d belong to checkpoints that did not complete: aborting them loses nothing Flink counts as delivered", len(notDone)))
	}
	if len(unknown) > 0 {
		parts = append(parts, fmt.Sprintf("for %d txnscope cannot tell (see their verdicts)", len(unknown)))
	}
	return strings.Join(parts, "; ")
}

// epochProblem: a Flink job whose id nears the end of its epochs. Kafka
// Streams gets none: its producer takes the new producer id from the EndTxn
// and keeps nothing of the old one.
func (j Job) epochProblem(now time.Time) Problem {
	return Problem{Kind: ProblemEpochRotation,
		What: "producer epoch nearly exhausted: " + j.Epoch.String(now),
		Why: "under transaction version 2 every commit bumps the epoch, and the end of the transaction at epoch " + strconv.Itoa(EpochRotatesAt) +
			" gives the id a new producer id; Flink's checkpoints name the old one, and a restore from a checkpoint taken before the rotation " +
			"commits with it and fails (FLINK-40689, open in the connector)",
		WayOut: "nothing to end here: the job's producers are live. Around the rotation, restore only from a checkpoint completed after it " +
			"(not an older checkpoint or savepoint); txnscope refuses to commit a committable of a rotated producer id"}
}
