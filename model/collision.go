package model

import (
	"fmt"
	"slices"
	"time"
)

// The prefix-collision rule (README, "Two jobs sharing a prefix").
//
// Flink's KafkaSink names its transactional ids <prefix>-<subtask>-<checkpoint>, and a
// prefix must belong to one job: a second job with the same prefix initializes ids the
// first one has open, which aborts (fences) the first one's transaction, and the two go
// on doing that to each other. What txnscope sees is takeovers: an id's open transaction
// ended because another producer initialized the same id.
//
// A single restart of a job looks alike for a moment: the restarted job aborts the
// transactions its previous run left open, once each, all at once (Flink's lingering
// transaction abort at start-up). That is at most a few ids per subtask (the current
// transaction, and a pre-committed one when the failure hit between pre-commit and
// commit) and one burst. So a prefix is flagged only when, within CollisionWindow, one
// subtask of it saw takeovers on at least collisionIDs distinct ids, in bursts at least
// collisionRound apart. Per subtask, because subtasks of one job restart on their own
// (region failover); distinct ids, because a busy producer that commits several times
// between two polls shows the same epoch jump as a takeover, but always on its one id.
//
// A job that crash-loops (three restarts within the window) is flagged too: it needs a
// look just as much, and the message says "looks shared" rather than "is shared".
const (
	// CollisionWindow is how far back takeovers count.
	CollisionWindow = 5 * time.Minute
	// collisionRound groups the takeovers of one restart: they happen within
	// milliseconds, and txnscope stamps them with the poll that saw them.
	collisionRound = 10 * time.Second
	// collisionIDs is one more than a single restart takes over per subtask.
	collisionIDs = 3
	// maxTakeoversPerPrefix bounds the memory of a prefix under constant collision.
	maxTakeoversPerPrefix = 256
)

// Takeover is an open transaction of a KafkaSink-style id ended by another producer
// initializing the same id.
type Takeover struct {
	At      time.Time
	ID      string
	Subtask int
}

// IsTakeover reports whether e shows an open transaction ended by a new producer on its
// id: a fence, an end whose epoch shows a new InitProducerId though its outcome is
// unknown (Reinit), or (under transaction version 2, where every commit and abort bumps
// the epoch once) a transaction replaced by another between two polls with the epoch two
// or more higher, which is what a fence looks like when the new owner begins at once: the
// fence bumps once, the new producer's InitProducerId once more.
func IsTakeover(e Event) bool {
	return e.Kind == Fenced || (e.Kind == Ended && (e.Reinit || e.EpochJump >= 2))
}

// Collision applies the rule to the takeovers recorded for one prefix (oldest first):
// ok when the prefix looks shared at now, with n the takeovers on the prefix within
// CollisionWindow.
func Collision(ts []Takeover, now time.Time) (n int, ok bool) {
	from := now.Add(-CollisionWindow)
	type sub struct {
		ids    map[string]bool
		rounds int
		round  time.Time // first takeover of the current burst
	}
	var subs map[int]*sub
	for _, t := range ts {
		if t.At.Before(from) || t.At.After(now) {
			continue
		}
		n++
		if subs == nil {
			subs = map[int]*sub{}
		}
		s := subs[t.Subtask]
		if s == nil {
			s = &sub{ids: map[string]bool{}}
			subs[t.Subtask] = s
		}
		s.ids[t.ID] = true
		if s.rounds == 0 || t.At.Sub(s.round) >= collisionRound {
			s.rounds++
			s.round = t.At
		}
	}
	for _, s := range subs {
		if len(s.ids) >= collisionIDs && s.rounds >= 2 {
			ok = true
		}
	}
	return n, ok
}

// CollisionProblem is the problem line for an id of a prefix that looks shared.
func CollisionProblem(prefix string, n int) string {
	return fmt.Sprintf("prefix %s looks shared: %d fences in %s", prefix, n, fmtWindow(CollisionWindow))
}

func fmtWindow(d time.Duration) string {
	if d%time.Minute == 0 {
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// prefixProblem says whether t's prefix looks shared. It is judged for the ids that
// matter now (open ones, and those taken over within the window), not for the
// thousands of finished ids an INCREMENTING prefix piles up.
func prefixProblem(t Txn, st IDStats, now time.Time) (string, bool) {
	if st.Prefix == "" || len(st.PrefixTakeovers) == 0 {
		return "", false
	}
	if !t.State.Open() && !slices.ContainsFunc(st.PrefixTakeovers, func(to Takeover) bool {
		return to.ID == t.ID && !to.At.Before(now.Add(-CollisionWindow))
	}) {
		return "", false
	}
	n, ok := Collision(st.PrefixTakeovers, now)
	if !ok {
		return "", false
	}
	return CollisionProblem(st.Prefix, n), true
}

// recordTakeover remembers e under its prefix when it is a takeover of a KafkaSink id.
func (h *History) recordTakeover(e Event) {
	if !IsTakeover(e) {
		return
	}
	f, ok := ParseFlinkID(e.ID)
	if !ok {
		return
	}
	if h.prefixes == nil {
		h.prefixes = map[string][]Takeover{}
	}
	ts := h.prefixes[f.Prefix]
	// Events arrive in poll order, so the old ones are at the front.
	cut := 0
	for cut < len(ts) && ts[cut].At.Before(e.At.Add(-CollisionWindow)) {
		cut++
	}
	if len(ts)-cut >= maxTakeoversPerPrefix {
		cut = len(ts) - maxTakeoversPerPrefix + 1
	}
	// A fresh slice each time: Stats hands the old one out to callers.
	next := make([]Takeover, 0, len(ts)-cut+1)
	next = append(next, ts[cut:]...)
	h.prefixes[f.Prefix] = append(next, Takeover{At: e.At, ID: e.ID, Subtask: f.Subtask})
}
