package model

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The Streams rules. A Kafka Streams thread under exactly_once_v2 commits
// every commit.interval.ms while it has input (100 ms by default), and
// Streams sets transaction.timeout.ms to 10 s: an app that commits every
// second and then nothing for 10 s has stopped, where a Flink job may
// checkpoint once in minutes. An app with no input begins no transaction:
// it is idle, not stalled, so the rules need evidence of trouble besides
// the silence, an open transaction or one lost (timed out, fenced) since
// the last sign of work.
const (
	ProblemStalled      ProblemKind = "stalled"
	ProblemInstanceGone ProblemKind = "instance_gone"
)

// streamsQuiet is how long a Streams app, or one of its instances, may do
// nothing before it is judged: cadenceFactor× its commit cadence, and not
// less than its transaction.timeout.ms, by when the coordinator has
// aborted whatever a stopped producer left open. 0: the cadence is not
// known yet, no judgement.
func (j Job) streamsQuiet() time.Duration {
	if j.Cadence <= 0 {
		return 0
	}
	floor := minNotCommitting
	if j.MaxTimeoutMs > 0 {
		floor = time.Duration(j.MaxTimeoutMs) * time.Millisecond
	}
	return max(cadenceFactor*j.Cadence, floor)
}

// stalled is the "stalled" problem of a Streams app: nothing of it has
// worked for streamsQuiet, with a transaction open or lost since.
func (j Job) stalled(now time.Time, loc *time.Location) (Problem, bool) {
	quiet := j.streamsQuiet()
	if j.ID.Family != StreamsApp || quiet == 0 || j.LastActive.IsZero() {
		return Problem{}, false
	}
	idle := now.Sub(j.LastActive)
	lost := j.LastLoss.After(j.LastActive)
	if idle <= quiet || len(j.Open) == 0 && !lost {
		return Problem{}, false
	}
	p := Problem{Kind: ProblemStalled,
		What: fmt.Sprintf("stalled: no commit for %s (it commits every %s)", short(idle.Round(time.Second)), short(j.Cadence.Round(100*time.Millisecond)))}
	switch {
	case len(j.Open) > 0:
		p.What += fmt.Sprintf(", %d open", len(j.Open))
		p.Why = "none of its threads has committed for longer than its transaction.timeout.ms while transactions are open: " +
			"its instances hang (GC, a blocked call, a rebalance that does not end) or are gone, " +
			"the coordinator aborts these at their timeout, and read_committed consumers of its output see nothing new"
	default:
		p.What += ", nothing open"
		p.Why = fmt.Sprintf("its last transactions were lost (timed out or fenced, the last at %s) and none began since: "+
			"its threads were fenced out and have not come back, or its instances hang or are gone; "+
			"read_committed consumers of its output see nothing new (an app whose input stops commits nothing either, "+
			"but loses nothing first)", clock(j.LastLoss, loc))
	}
	p.WayOut = "look at the application's instances: are they running, and what do their logs say " +
		"(ProducerFencedException, TaskMigratedException, rebalancing without end); restart the ones that hang. " +
		"Do not end its transactions from here: a live thread drives them, and the coordinator aborts a dead one's at its timeout"
	return p, true
}

// streamsProcess is one instance of a Streams app: the threads whose ids
// carry its process id (<application.id>-<process UUID>-<thread>).
type streamsProcess struct {
	name                string
	threads             []string
	open                int
	active, lost, first time.Time
}

// StreamsThread splits a Streams unit's name, <process UUID>-<thread>,
// into its two parts; ok is false for a unit of another shape (a task id
// of the older exactly_once scheme).
func StreamsThread(unit string) (process, thread string, ok bool) {
	i := strings.LastIndexByte(unit, '-')
	if i <= 0 || i == len(unit)-1 {
		return "", "", false
	}
	return unit[:i], unit[i+1:], true
}

// processOf is the process part of a Streams unit's name: the unit itself
// when it names a task.
func processOf(unit string) string {
	if p, _, ok := StreamsThread(unit); ok {
		return p
	}
	return unit
}

func (j Job) processes() []*streamsProcess {
	var out []*streamsProcess
	byName := map[string]*streamsProcess{}
	for _, u := range j.Units {
		name := processOf(u.Name)
		p := byName[name]
		if p == nil {
			p = &streamsProcess{name: name}
			byName[name] = p
			out = append(out, p)
		}
		p.threads = append(p.threads, u.Name)
		p.open += len(u.Open)
		p.active = latest(p.active, u.LastActive)
		p.lost = latest(p.lost, u.LastLoss)
		if !u.FirstSeen.IsZero() && (p.first.IsZero() || u.FirstSeen.Before(p.first)) {
			p.first = u.FirstSeen
		}
	}
	slices.SortFunc(out, func(a, b *streamsProcess) int { return strings.Compare(a.name, b.name) })
	return out
}

// goneInstances is the "instance gone" problem of a Streams app, one per
// instance: its threads have done nothing for streamsQuiet, with a
// transaction open or lost since, while another instance works. One that
// an instance started since has replaced (a fresh state directory: new
// ids) is not: nothing is left to do about it.
func (j Job) goneInstances(now time.Time, loc *time.Location) []Problem {
	quiet := j.streamsQuiet()
	if j.ID.Family != StreamsApp || quiet == 0 {
		return nil
	}
	procs := j.processes()
	var out []Problem
	for _, p := range procs {
		if p.active.IsZero() || now.Sub(p.active) <= quiet || p.open == 0 && !p.lost.After(p.active) {
			continue
		}
		others := false
		for _, q := range procs {
			if q == p {
				continue
			}
			// Another works now, and went on well after p stopped: two
			// instances that hang together stop a second or two apart.
			if now.Sub(q.active) <= quiet && q.active.Sub(p.active) > quiet/2 {
				others = true
			}
			if q.first.After(p.active) {
				others = false // replaced: see below
				break
			}
		}
		if !others {
			continue
		}
		out = append(out, j.goneProblem(p, now, loc))
	}
	return out
}

func (j Job) goneProblem(p *streamsProcess, now time.Time, loc *time.Location) Problem {
	short8 := p.name
	if len(short8) > 8 {
		short8 = short8[:8] + "…"
	}
	n := len(p.threads)
	pr := Problem{Kind: ProblemInstanceGone,
		What: fmt.Sprintf("instance %s gone: its %d %s quiet for %s, the others commit", short8, n, plural(n, "thread", "threads"),
			short(now.Sub(p.active).Round(time.Second)))}
	ids := make([]string, n)
	for i, t := range p.threads {
		ids[i] = j.ID.Name + "-" + t
	}
	if p.open > 0 {
		pr.Why = fmt.Sprintf("process %s has %d open %s and has written nothing since %s: it was killed or hangs. "+
			"The coordinator aborts them at their transaction.timeout.ms; until then they pin their partitions, "+
			"and the other instances take over its tasks only then", p.name, p.open, plural(p.open, "transaction", "transactions"), clock(p.active, loc))
	} else {
		pr.Why = fmt.Sprintf("process %s's last transactions were lost (timed out or fenced, the last at %s) and it has begun none since: "+
			"it was killed or hangs, and the other instances run its tasks", p.name, clock(p.lost, loc))
	}
	pr.Why += fmt.Sprintf(". Its ids (%s) stay unused until it restarts on the same state directory, which keeps its process id", strings.Join(ids, ", "))
	pr.WayOut = "restart the instance on its state directory (the same ids come back and go on); started on a fresh one it gets new ids, " +
		"and these stay idle until transactional.id.expiration.ms. Do not end its transactions from here while it may only hang: " +
		"the coordinator aborts them at their timeout"
	return pr
}

// streamsStuck leaves out of StuckGroups the groups that wait only on
// transactions younger than the app's commit gap (cadenceFactor× its
// cadence; its transaction.timeout.ms while the cadence is not known):
// a read_committed reader of a Streams app's output waits at every
// transaction, for up to a commit interval, and that is not stuck.
func (j *Job) streamsStuck(now time.Time) {
	if j.ID.Family != StreamsApp || len(j.StuckGroups) == 0 {
		return
	}
	normal := cadenceFactor * j.Cadence
	if j.Cadence <= 0 {
		normal = time.Duration(j.MaxTimeoutMs) * time.Millisecond
	}
	var keep []string
	for _, p := range j.Pinned {
		if p.StartMs > 0 && now.Sub(time.UnixMilli(p.StartMs)) <= normal {
			continue
		}
		for _, g := range p.Groups {
			if !slices.Contains(keep, g) {
				keep = append(keep, g)
			}
		}
	}
	slices.Sort(keep)
	j.StuckGroups = keep
}
