// Package exporter serves what txnscope works out every refresh as
// Prometheus metrics. This file is the arithmetic, without I/O: the values
// of one refresh, from the same model functions the UI's screens use, so an
// alert and the UI tell the same story.
package exporter

import (
	"cmp"
	"slices"
	"time"

	"github.com/txnscope/txnscope/model"
)

// Values are the gauges of one refresh.
type Values struct {
	// States counts the transactions by state, as the header does.
	States map[model.State]int
	// Open are the open transactions with a known start. Only the most
	// urgent of them get series of their own (Urgent): ids come and go
	// with every Flink checkpoint, and a series per id would grow
	// Prometheus' index without end.
	Open []OpenTxn
	// Urgent are the open transactions served as series of their own
	// (Options.MaxIDSeries), set by the exporter after Compute.
	Urgent []OpenTxn
	// OldestOpen is the age of the oldest open transaction (0: none).
	OldestOpen time.Duration
	Jobs       []JobValues
	// Pins are the pinned partitions, as the partitions screen lists them.
	Pins            []PinValues
	Pinned, Hanging int
	// Groups are the read_committed groups stuck behind a pin, as the groups
	// screen lists them.
	Groups []GroupValues
	// Unknown says which of Unknowable the last refresh could not know.
	Unknown map[string]bool
	// Unanswered are the brokers that did not answer the last refresh.
	Unanswered []model.BrokerError
}

// Unknowable are what a refresh may be unable to know, as the label of
// txnscope_unknown: every one is served, 0 or 1, so that a rule sees it go.
var Unknowable = []string{
	"transactional_ids",       // ListTransactions leaves out ids the principal may not DESCRIBE
	"producers",               // DescribeProducers refused (needs READ on the topic): who pins a partition
	"partition_offsets",       // some partitions' offsets could not be read
	"consumer_groups",         // the groups (or their offsets) could not be read: stuck groups
	"max_transaction_timeout", // transaction.max.timeout.ms (DescribeConfigs): the timeout rule, the idle rule
	"coordinator_log",         // __transaction_state cannot be followed: the history comes from polls
}

// unknownOf is what s says it could not know.
func unknownOf(s *model.Snapshot) map[string]bool {
	u := map[string]bool{
		"transactional_ids":       s.Hidden != "",
		"partition_offsets":       s.Unread > 0,
		"consumer_groups":         s.GroupsErr != "",
		"max_transaction_timeout": s.BrokerMaxTimeoutMs <= 0,
		"coordinator_log":         !s.Source.Log,
	}
	for _, p := range s.Partitions {
		if model.Denied(p.Err) {
			u["producers"] = true
		}
	}
	return u
}

// OpenTxn is one open transaction.
type OpenTxn struct {
	ID, Job  string
	Age      time.Duration
	Ratio    float64 // age ÷ timeout
	HasRatio bool    // the timeout is known
}

// JobValues are one job's figures, as the jobs screen shows them.
type JobValues struct {
	Job, Family string
	// Open counts its open transactions; OldestOpen is the oldest one's
	// age, when its start is known (HasOldest).
	Open       int
	OldestOpen time.Duration
	HasOldest  bool
	Lingering  int
	MaxRatio   float64 // the largest age ÷ timeout of its open ids
	HasRatio   bool
	// SinceCommit is the time since History last saw one of its ids commit.
	SinceCommit time.Duration
	HasCommit   bool
	Shared      bool // its prefix is taken over by two jobs (Collision)
	// Epoch is its highest producer epoch (HasEpoch: one described);
	// ToRotation the time until its first id's producer id rotates at the
	// epoch's recent rate (HasRotation: a rate is known).
	Epoch       int16
	HasEpoch    bool
	ToRotation  time.Duration
	HasRotation bool
	// Problems are the kinds of the jobs view's problems for it, as the
	// TUI sees them without --checkpoint-interval (the cadence stands in).
	Problems []model.ProblemKind
}

// PinValues is one pinned partition.
type PinValues struct {
	model.TopicPartition
	PinnedFor time.Duration
	HeldBack  int64 // HWM − LSO: what read_committed readers cannot see yet
}

// GroupValues is one stuck group.
type GroupValues struct {
	Group    string
	Type     string // model.GroupClassic, ...
	StuckFor time.Duration
}

// Compute works out the values of snapshot s with history h at now; tr is
// the pin tracker that has observed every snapshot so far (s included), as
// the UI keeps one, so that "pinned for" counts from the first sighting.
func Compute(s *model.Snapshot, h *model.History, tr *model.PinTracker, now time.Time) Values {
	v := Values{States: map[model.State]int{}}
	if s == nil {
		return v
	}
	// Ongoing is always there, as in the header: a rule on it must see 0,
	// not no series, once the last transaction ends.
	v.States[model.Ongoing] = 0
	for st, n := range s.StateCounts() {
		v.States[st] = n
	}
	v.Open = openTxns(s, now)
	if t, ok := s.OldestOpen(); ok {
		v.OldestOpen, _ = t.Age(now)
	}
	byPID := model.ProducersOn(s)
	pins := model.PinsOf(s, byPID, tr, now)
	v.Pinned = len(pins)
	for i := range pins {
		p := &pins[i]
		if p.Hanging {
			v.Hanging++
		}
		pv := PinValues{TopicPartition: p.TopicPartition, PinnedFor: p.PinnedFor(now)}
		if p.HighWatermark >= 0 && p.LastStableOffset >= 0 {
			pv.HeldBack = p.HighWatermark - p.LastStableOffset
		}
		v.Pins = append(v.Pins, pv)
	}
	for _, g := range model.BlockedGroups(pins) {
		v.Groups = append(v.Groups, GroupValues{Group: g.Group, Type: cmp.Or(g.Type, model.GroupClassic), StuckFor: max(now.Sub(g.Since), 0)})
	}
	v.Jobs = jobValues(s, model.Group(s, pins).Jobs(h, now), v.Open, now)
	v.Unknown = unknownOf(s)
	v.Unanswered = s.Unanswered
	return v
}

func openTxns(s *model.Snapshot, now time.Time) []OpenTxn {
	var out []OpenTxn
	for i := range s.Txns {
		t := &s.Txns[i]
		age, ok := t.Age(now)
		if !ok {
			continue
		}
		o := OpenTxn{ID: t.ID, Job: jobName(model.JobOf(t.ID).Job), Age: age}
		o.Ratio, o.HasRatio = t.Ratio(now)
		out = append(out, o)
	}
	return out
}

// jobValues is each job's figures; the largest ratio is over its open ids,
// whose timeouts may differ, so it is not the oldest one's.
func jobValues(s *model.Snapshot, jobs []model.Job, open []OpenTxn, now time.Time) []JobValues {
	type key struct{ job, family string }
	out := make([]JobValues, 0, len(jobs))
	maxOf := map[key]float64{}
	has := map[key]bool{}
	// The oldest by age among those whose start is known: Job.Oldest may
	// be one not yet described, whose age nobody knows.
	oldest := map[key]time.Duration{}
	hasAge := map[key]bool{}
	for _, o := range open {
		k := key{o.Job, string(model.JobOf(o.ID).Job.Family)} // o.Job is jobName already
		oldest[k], hasAge[k] = max(oldest[k], o.Age), true
		if !o.HasRatio {
			continue
		}
		if !has[k] || o.Ratio > maxOf[k] {
			maxOf[k], has[k] = o.Ratio, true
		}
	}
	for _, j := range jobs {
		k := key{jobName(j.ID), string(j.ID.Family)}
		jv := JobValues{Job: k.job, Family: k.family, Open: len(j.Open), Lingering: len(j.Lingering), Shared: j.Shared}
		jv.OldestOpen, jv.HasOldest = oldest[k], len(j.Open) > 0 && hasAge[k]
		jv.MaxRatio, jv.HasRatio = maxOf[k], has[k]
		if !j.LastCommit.IsZero() {
			jv.SinceCommit, jv.HasCommit = max(now.Sub(j.LastCommit), 0), true
		}
		if e := j.Epoch; e.ID != "" {
			jv.Epoch, jv.HasEpoch = e.Epoch, true
			if !e.Rotates.IsZero() {
				jv.ToRotation, jv.HasRotation = max(e.Rotates.Sub(now), 0), true
			}
		}
		for _, p := range j.Problems(s, model.Query{}, now) {
			if !slices.Contains(jv.Problems, p.Kind) {
				jv.Problems = append(jv.Problems, p.Kind)
			}
		}
		out = append(out, jv)
	}
	slices.SortFunc(out, func(a, b JobValues) int {
		return cmp.Or(cmp.Compare(a.Family, b.Family), cmp.Compare(a.Job, b.Job))
	})
	return out
}

// jobName is a job's label, as the jobs screen names it: the ids of no
// family are one job, "other".
func jobName(id model.JobID) string {
	if id.Family == model.OtherFamily {
		return "other"
	}
	return id.Name
}

// Urgent are the n open transactions nearest their timeout (the highest
// age ÷ timeout first, then those whose timeout is not known, oldest
// first), for the id-level series. Their labels are the id and its job
// only, so a transaction keeps its series while it stays among them.
func Urgent(open []OpenTxn, n int) []OpenTxn {
	if n <= 0 {
		return nil
	}
	out := slices.Clone(open)
	slices.SortFunc(out, func(a, b OpenTxn) int {
		if a.HasRatio != b.HasRatio {
			if a.HasRatio {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(b.Ratio, a.Ratio), cmp.Compare(b.Age, a.Age), cmp.Compare(a.ID, b.ID))
	})
	return out[:min(n, len(out))]
}
