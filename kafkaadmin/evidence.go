package kafkaadmin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/txnscope/txnscope/model"
)

// evidence is what is known, once the coordinator answered, about every
// transaction a force-terminate could have hit: the logs of the partitions
// of the one confirmed (trails, from the marks noted before the re-check)
// and the id re-read after the answer.
type evidence struct {
	a      model.Action
	trails []trail
	fresh  model.Txn
	found  bool // the re-read succeeded and found the id
}

// A verdict is what the evidence lets the result say.
type verdict struct {
	aborted bool   // the one confirmed is aborted and nothing newer was hit
	unknown bool   // the evidence cannot tell what the request aborted
	text    string // why, in words
}

// shown is how the transaction confirmed ended: the first of its trails that
// read its marker.
func (ev evidence) shown() (trail, bool) {
	for _, tr := range ev.trails {
		if tr.ended != model.NoState {
			return tr, true
		}
	}
	return trail{}, false
}

// unread lists the partitions of the one confirmed whose log was not read to
// the high watermark: a newer transaction there cannot be ruled out.
func (ev evidence) unread() []tp {
	whole := map[tp]bool{}
	for _, tr := range ev.trails {
		if tr.whole {
			whole[tr.at] = true
		}
	}
	var out []tp
	for _, p := range ev.a.Partitions {
		if !whole[p] {
			out = append(out, p)
		}
	}
	return out
}

// unfenced reports proof that no request fenced the producer since the one
// confirmed committed: the coordinator still has it at the epoch of its
// COMMIT marker (any fence bumps the epoch, under either transaction
// version; under version 2 the marker carries the epoch its commit bumped
// to).
func (ev evidence) unfenced(tr trail) bool {
	switch ev.fresh.State {
	case model.PrepareEpochFence, model.PrepareAbort, model.CompleteAbort:
		return false
	}
	return ev.found && tr.ended == model.CompleteCommit && ev.fresh.ProducerID == ev.a.ProducerID && ev.fresh.ProducerEpoch == tr.endedEpoch
}

// stillOpen reports that the records after tr's last marker belong to the
// newer transaction the coordinator has open now, which the request did not
// abort: a transaction begins only once the one before it completed, markers
// written, so on a partition read to its end whatever of the producer
// follows its last marker is the open one's.
func (ev evidence) stillOpen(tr trail) bool {
	f := ev.fresh
	return tr.whole && ev.found && f.State.Open() && f.ProducerID == ev.a.ProducerID &&
		f.StartTime().After(ev.a.Start) && slices.Contains(f.Partitions, tr.at)
}

// judge says what a request did, fence set when the coordinator answered
// CONCURRENT_TRANSACTIONS (Kafka's answer to the request that fences an open
// transaction, and to one that arrives while a transaction completes).
// Without it the answer says nothing: Kafka answers without an error only
// when nothing was open, but kfake aborts inline and answers so too. "Nothing
// was aborted" is said only with proof; a newer transaction that may have
// been aborted is named, with the outcome unknown.
func (ev evidence) judge(fence bool) verdict {
	id := ev.a.TransactionalID
	shown, read := ev.shown()
	switch {
	case read && ev.unfenced(shown):
		return verdict{text: fmt.Sprintf("%s, and the id is still at epoch %d, which a fence would have bumped: nothing was aborted",
			shownText(shown), ev.fresh.ProducerEpoch)}
	case ev.found && model.AbortingNewer(ev.a, ev.fresh):
		ended := "the one shown ended while the request was on its way"
		if read {
			ended = shownText(shown)
		}
		marker := ""
		for _, tr := range ev.trails {
			if tr.abortAt >= 0 {
				marker = fmt.Sprintf(" (its ABORT marker is at offset %d of %s)", tr.abortAt, partText(tr.at))
				break
			}
		}
		return verdict{unknown: true, text: fmt.Sprintf("a newer transaction of %s (started at %s; the one shown started at %s) is being aborted, now %s at epoch %d%s: "+
			"%s, and this request most likely aborted the newer one and fenced its producer",
			id, model.ClockMs(ev.fresh.StartTime()), model.ClockMs(ev.a.Start), ev.fresh.State, ev.fresh.ProducerEpoch, marker, ended)}
	}
	for _, tr := range ev.trails {
		if tr.abortAt >= 0 {
			// One request hits one transaction: after one that committed
			// the newer one is the likely target; after an abort, which
			// may have been this request's, it may be a later one's own.
			likely := "most likely"
			if shown.ended == model.CompleteAbort {
				likely = "may have"
			}
			return verdict{unknown: true, text: fmt.Sprintf("%s; %s and has an ABORT marker at offset %d: this request %s aborted it and fenced its producer",
				orUnread(shown, read), newerText(id, tr), tr.abortAt, likely)}
		}
	}
	for _, tr := range ev.trails {
		if tr.open && !ev.stillOpen(tr) {
			return verdict{unknown: true, text: fmt.Sprintf("%s; %s and no end of it could be read: this request may have aborted it and fenced its producer",
				orUnread(shown, read), newerText(id, tr))}
		}
	}
	switch {
	case !read:
		return verdict{unknown: true, text: "its COMMIT or ABORT marker could not be read"}
	case shown.ended == model.CompleteAbort:
		return verdict{aborted: true, text: "its ABORT marker is in the log"}
	}
	// Committed, and nothing newer in the logs read: the request still
	// fenced the producer, and may have aborted a newer transaction that
	// wrote only elsewhere.
	what := "the request fenced its producer"
	switch {
	case fence && ev.found:
		what = fmt.Sprintf("the id has moved to epoch %d since", ev.fresh.ProducerEpoch)
	case fence:
		what = "the id could not be re-read at that epoch since"
	}
	where := "nothing of a newer transaction of " + id + " follows it in the log of " + partsText(readParts(ev.trails))
	if un := ev.unread(); len(un) == len(ev.a.Partitions) {
		where = "the logs of its partitions could not be read to their end"
	} else if len(un) > 0 {
		where += " (" + partsText(un) + " could not be read to the end)"
	}
	return verdict{unknown: true, text: fmt.Sprintf("%s, and %s; %s, but a newer one open elsewhere would have been aborted, and no log read shows whether one was",
		shownText(shown), what, where)}
}

func shownText(tr trail) string {
	if tr.ended == model.CompleteCommit {
		return fmt.Sprintf("the one shown had committed before the request arrived (its COMMIT marker is at offset %d of %s)", tr.endedAt, partText(tr.at))
	}
	return fmt.Sprintf("the one shown was aborted (its ABORT marker is at offset %d of %s)", tr.endedAt, partText(tr.at))
}

func orUnread(tr trail, read bool) string {
	if !read {
		return "how the one shown ended could not be read from its log"
	}
	return shownText(tr)
}

func newerText(id string, tr trail) string {
	return fmt.Sprintf("a newer transaction of %s began after it (at offset %d of %s)", id, tr.newerAt, partText(tr.at))
}

func readParts(trails []trail) []tp {
	var out []tp
	for _, tr := range trails {
		if tr.whole {
			out = append(out, tr.at)
		}
	}
	return out
}

func partText(p tp) string { return fmt.Sprintf("%s-%d", p.Topic, p.Partition) }

// partsText names up to three partitions, and counts the rest.
func partsText(ps []tp) string {
	if len(ps) == 0 {
		return "none of its partitions"
	}
	var names []string
	for _, p := range ps[:min(len(ps), 3)] {
		names = append(names, partText(p))
	}
	s := strings.Join(names, ", ")
	if len(ps) > 3 {
		s += fmt.Sprintf(" and %d more", len(ps)-3)
	}
	return s
}
