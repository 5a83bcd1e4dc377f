package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/txnscope/txnscope/model"
)

// Refresh reads the whole cluster once. prev (may be nil) is the previous
// snapshot: idle ids whose state and producer id did not change keep their
// described fields from it instead of being described again. It returns an error
// only when the cluster as a whole could not be read; per-id and per-partition
// problems land in Txn.Err and Partition.Err. Every listed id is described
// (none is left Pending): what `snapshot` and the one-shot commands need.
func (c *Client) Refresh(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	return c.refresh(ctx, prev, -1, nil)
}

// Poll is the TUI's refresh: Refresh with a bounded describe. A first poll
// (prev nil) describes nothing, so that every listed id is on screen after one
// ListTransactions (at holdRowsAt ids or more, only its open ids: openOnly);
// later ones describe what changed since prev: every open id (as Refresh
// does), and at most pollBudget of the others (new ids, idle ones whose state
// or producer changed). The ids left over, and those prev
// still had pending, stay listed only (Txn.Pending) for Describe.
//
// The log's reader starts after the first poll's listing: at 2,000,000 ids
// its start-up read of the log shared the two cores with that listing, and
// the first rows came after 2.7 times the bare listing's time.
func (c *Client) Poll(ctx context.Context, prev *model.Snapshot) (*model.Snapshot, error) {
	if prev == nil && c.followed.Load() == nil {
		s, err := c.refresh(ctx, nil, 0, nil)
		if s != nil {
			s.Source = notFollowing
		}
		if c.cfg.FollowLog {
			f := c.follow()
			followStarted()
			if s != nil {
				// "reading the log", as a poll while it reads says. These
				// rows are the listing's even if the reader is already
				// live (a tiny log, read before this line runs): the log is
				// the source from the next poll, never for rows it did not
				// give.
				s.Source = f.source()
				if s.Source.Log {
					s.Source = model.Source{Reading: true, Since: s.Source.Since}
				}
			}
			if s != nil && len(s.Txns) >= holdRowsAt {
				// The polls while the log is read hold these rows (holdRows)
				// and the log's end gives every row: the listing's order
				// would pair with nothing, and kept its 20 bytes an id (40
				// MB at 2,000,000) beside the log's rows. Should the reader
				// fail, the next listing pairs by sorting.
				c.order.take(nil)
			}
		}
		return s, err
	}
	if c.cfg.FollowLog {
		c.follow()
	}
	if prev == nil { // a first poll again, after an error: the reader runs
		return c.refresh(ctx, nil, 0, c.fromLog)
	}
	return c.refresh(ctx, prev, c.budget, c.fromLog)
}

// followStarted runs once a first poll has started the log's reader (tests
// hold it there).
var followStarted = func() {}

// pollBudget bounds the idle ids one Poll describes: a few round trips, a
// small part of what a 500,000-id listing costs.
const pollBudget = 10000

// rowsFrom gives a refresh its rows and events from somewhere other than a
// listing (the coordinators' log), once the early scan has the log's end; ok
// false lists instead, and source says why.
type rowsFrom func(ctx context.Context, early *earlyScan) (snap *model.Snapshot, evs []model.Event, source model.Source, ok bool)

// refresh reads the cluster, its rows from rows when it has them, else
// listed, describing the ids that need it within budget (withinBudget; all
// of them when budget < 0, the pending ones of prev included).
func (c *Client) refresh(ctx context.Context, prev *model.Snapshot, budget int, rows rowsFrom) (*model.Snapshot, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	ctx = withSilentNodes(ctx)

	brokers, meta, err := c.clusterMetadata(ctx)
	if err != nil {
		return nil, whole(ctx, "cannot reach the cluster", err)
	}
	var (
		settings brokerSettings
		bg       sync.WaitGroup
	)
	bg.Go(func() { settings = c.brokerSettings(ctx, brokers) })
	early := c.startScan(ctx, prev, brokers, meta, &bg)
	defer func() {
		cancel() // an early return must not wait for the settings read
		bg.Wait()
	}()

	taken := time.Now()
	var (
		snap    *model.Snapshot
		changed []model.Txn
		failed  map[int32]error
		source  model.Source
		events  []model.Event
	)
	logged, held := false, false
	if rows != nil {
		snap, events, source, logged = rows(ctx, early)
	}
	if !logged && holdRows(prev, source, taken) {
		snap, held = &model.Snapshot{}, true
		snap.HoldRows(prev)
	} else if !logged {
		list, fails, err := c.listAll(ctx, nil, brokers)
		if err != nil {
			return nil, whole(ctx, "cannot list transactions", err)
		}
		failed = fails
		c.listed.Store(int64(list.len()))
		b := budget
		if prev == nil && budget == 0 && list.len() >= holdRowsAt {
			b = openOnly
		}
		var txns []model.Txn
		txns, changed = c.currentTxns(ctx, prev, list, failed, b)
		snap = &model.Snapshot{Txns: txns}
	}
	snap.TakenAt, snap.Bootstrap, snap.Brokers, snap.Source, snap.Events = taken, c.bootstrap, len(brokers), source, events
	snap.ReadAt = time.Now()
	snap.Sort()

	ends := findEndings(prev, changed)
	outcomes := c.readPartitions(ctx, prev, snap, ends, brokers, early)
	bg.Wait()

	snap.BrokerMaxTimeoutMs = settings.maxTimeoutMs
	snap.EpochBumpsOnEnd = settings.bumpsOnEnd
	applyOutcomes(snap, ends, outcomes)
	applyHidden(snap, settings)
	markUnlisted(snap, failed)
	if held {
		markHeld(snap)
	}
	if logged {
		c.confirmLogOwners(ctx, snap)
		// No listing will pair with the last one's order now: held, it kept
		// that listing's ids alive beside the log's (43 bytes an id).
		c.order.take(nil)
	}
	if !settings.idsHidden && len(failed) == 0 {
		c.vouchForOwners(ctx, snap)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !logged {
		c.logEvents(snap)
	}
	for b, err := range c.brokersGone(brokers, taken) {
		if _, ok := failed[b]; !ok {
			if failed == nil {
				failed = map[int32]error{}
			}
			failed[b] = err
		}
	}
	if u := silentBrokers(ctx, failed); len(u) > 0 {
		snap.Unanswered = u
	}
	// Txns were sorted above and the scan returns its partitions sorted:
	// nothing since has moved a row.
	return snap, nil
}

// currentTxns describes the listed ids that changed since prev (at most
// budget of them, see refresh), and the ones prev had that the listing lost
// (to learn whether they are gone), and merges each with what prev knew of
// it. changed are the rows described now: only they can have ended a
// transaction since prev (none are returned without a prev).
func (c *Client) currentTxns(ctx context.Context, prev *model.Snapshot, list listing, failed map[int32]error, budget int) (txns, changed []model.Txn) {
	was, seq := c.order.take(prev)
	listedIDs := list.len()
	p := pairWithPrev(prev, list, was, seq)
	// From here the listing (30 MB at 500,000 ids) is garbage: p holds
	// what it said of each row, and the new ids' strings of their own
	// (but for a first listing, whose rows p makes from it).
	// Each row is built in place, and each answer lands in its row: at
	// 500,000 ids, rows of their own and a map of the answers held as much
	// again as the snapshot.
	txns = make([]model.Txn, 0, p.n)
	places := make([]int32, 0, p.n) // each row's place in the listing
	var ask []asked
	left := budget
	if budget == openOnly {
		left = openAtMost
	}
	for r := range p.rows() {
		places = append(places, r.k)
		if !needsDescribe(r.l, r.prev, budget < 0 && budget != openOnly) {
			txns = append(txns, merge(r.id, r.l, nil, r.prev))
			continue
		}
		if describeNow(r.l.state.Open(), budget, &left) {
			ask = append(ask, asked{i: len(txns), prev: r.prev})
		}
		txns = append(txns, listedOnly(r.id, r.l))
	}
	vanished := missing(p.notListed, failed)
	refs := make([]txnRef, 0, len(ask)+len(vanished))
	for _, a := range ask {
		refs = append(refs, txnRef{id: txns[a.i].ID, coord: txns[a.i].Coordinator})
	}
	for _, v := range vanished {
		refs = append(refs, txnRef{id: v.ID, coord: v.Coordinator})
	}

	fresh := make([]int8, len(txns)) // 1: described now, -1: gone
	late := make([]described, len(vanished))
	c.describeEach(ctx, refs, func(n int, d described) {
		if n >= len(ask) {
			late[n-len(ask)] = d
			return
		}
		i := ask[n].i
		if d.gone {
			fresh[i] = -1
			return
		}
		t := &txns[i] // listed only, so far
		*t = merge(t.ID, listed{state: t.State, pid: t.ProducerID, coord: t.Coordinator}, &d, ask[n].prev)
		if t.Described {
			fresh[i] = 1
		}
	})

	kept, at := txns[:0], places[:0]
	for i := range txns {
		if fresh[i] < 0 {
			continue
		}
		if fresh[i] > 0 && prev != nil {
			changed = append(changed, txns[i])
		}
		kept, at = append(kept, txns[i]), append(at, places[i])
	}
	extra := append(unlisted(p.notListed, failed), stillThere(vanished, late)...)
	if len(extra) == 0 {
		c.order.set(kept, at, listedIDs)
	} else {
		c.order.set(nil, nil, 0) // the sort will move rows
	}
	return append(kept, extra...), changed
}

// asked is a row of currentTxns' to describe now, and its previous row.
type asked struct {
	i    int
	prev *model.Txn
}

// earlyScan reads the partitions prev watched (scan.go) while the ids are
// listed and described: at 500,000 ids the listing is most of a refresh, and
// the partitions, read after it, added a fifth to it.
type earlyScan struct {
	watch   []tp
	done    chan struct{}
	meta    metaMap
	scanned scan
	// ends has the log's end once the partitions' offsets are read.
	ends chan logEnds
}

func (c *Client) startScan(ctx context.Context, prev *model.Snapshot, brokers []int32, meta metaMap, wg *sync.WaitGroup) *earlyScan {
	var txns []model.Txn
	if prev != nil {
		txns = prev.Txns
	}
	e := &earlyScan{watch: watched(prev, txns, c.cfg.Watch), done: make(chan struct{}), meta: meta, ends: make(chan logEnds, 1)}
	wg.Go(func() {
		defer close(e.done)
		e.scanned = c.scanPartitions(ctx, e.watch, e.meta, brokers, e.ends)
	})
	return e
}

// readPartitions puts the partitions into snap: early's, when it read the
// producers of every partition snap watches, else read again. Meanwhile it reads from the log
// how the transactions in ends ended (outcome.go), and returns that.
func (c *Client) readPartitions(ctx context.Context, prev, snap *model.Snapshot, ends []ending, brokers []int32, early *earlyScan) map[string]model.State {
	watch := watched(prev, snap.Txns, c.cfg.Watch)
	<-early.done
	var (
		outcomes map[string]model.State
		scanned  = early.scanned
		wg       sync.WaitGroup
	)
	wg.Go(func() { outcomes = c.readOutcomes(ctx, ends, early.meta) })
	if covers(read(early), watch) {
		scanned.parts = stillShown(scanned.parts, watch)
	} else { // a transaction opened on a partition nothing watched before
		scanned = c.scanPartitions(ctx, watch, early.meta, brokers, nil)
	}
	wg.Wait()
	snap.Partitions, snap.Scanned, snap.Unread = scanned.parts, scanned.scanned, scanned.unread
	snap.GroupCommits, snap.GroupsErr = scanned.commits, scanned.groupsErr
	return outcomes
}

// read are the partitions whose producers early read, sorted: the watched
// ones and the pinned ones.
func read(early *earlyScan) []tp {
	out := slices.Clone(early.watch)
	for _, p := range early.scanned.parts {
		out = append(out, p.TopicPartition)
	}
	model.SortPartitions(out)
	return out
}

// covers reports whether the sorted partitions of a include all of b's.
func covers(a, b []tp) bool {
	for _, p := range b {
		for len(a) > 0 && a[0].Less(p) {
			a = a[1:]
		}
		if len(a) == 0 || a[0] != p {
			return false
		}
	}
	return true
}

// stillShown keeps the rows a scan of watch would have: the watched
// partitions and the pinned ones.
func stillShown(parts []model.Partition, watch []tp) []model.Partition {
	out := parts[:0]
	for _, p := range parts {
		if _, ok := slices.BinarySearchFunc(watch, p.TopicPartition, model.ComparePartitions); ok || p.Pinned() {
			out = append(out, p)
		}
	}
	return out
}

// whole explains a failure to read the cluster, preferring the caller's own
// cancellation when that is what happened.
func whole(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	// A step skipped the broker because another's connection to it failed
	// first: the refresh failed for that first failure (connection
	// refused), which is what to say, not that it was skipped.
	var cut errCut
	if errors.As(err, &cut) && cut.cause != nil {
		err = cut.cause
	}
	return fmt.Errorf("%s: %s", what, errText(err))
}

// unlisted keeps the previous rows of ids whose coordinator did not answer this
// listing, marked with why: they did not vanish, we just could not see them.
func unlisted(notListed []*model.Txn, failed map[int32]error) []model.Txn {
	if len(failed) == 0 {
		return nil
	}
	var out []model.Txn
	for _, row := range notListed {
		p := *row
		why, ok := failed[p.Coordinator]
		if !ok {
			continue
		}
		p.Err = fmt.Sprintf("coordinator %d did not answer, showing the last known state: %s", p.Coordinator, errText(why))
		out = append(out, p)
	}
	return out
}

// missing returns the previous rows of ids a coordinator that answered did not
// list. A coordinator still loading its log after a restart answers with an
// empty list and no error; only a describe tells an id that expired from one
// that was left out.
func missing(notListed []*model.Txn, failed map[int32]error) []model.Txn {
	var out []model.Txn
	for _, p := range notListed {
		if _, ok := failed[p.Coordinator]; ok {
			continue // unlisted keeps it
		}
		out = append(out, *p)
	}
	return out
}

// stillThere keeps the ids the describe did not call gone: as described now,
// or as last known, marked, when the describe failed too. desc[i] is the
// answer for vanished[i].
func stillThere(vanished []model.Txn, desc []described) []model.Txn {
	var out []model.Txn
	for i, p := range vanished {
		d := desc[i]
		switch {
		case d.gone:
			continue
		case d.txn.Described:
			out = append(out, d.txn)
		default:
			p.Err = "its coordinator did not list it, showing the last known state: " + d.err
			out = append(out, p)
		}
	}
	return out
}

// holdRowsAt and holdRowsFor bound holdRows: vars for the tests.
var (
	holdRowsAt  = 1_000_000
	holdRowsFor = 2 * time.Minute
)

// holdRows reports whether a refresh keeps prev's rows instead of listing
// again: while the log is first read (its end gives every id's row anyway),
// at holdRowsAt ids or more, for holdRowsFor at most. At 2,000,000 ids a
// listing during that read made a second generation of every row, 200 MB
// of the peak beside the log's own.
func holdRows(prev *model.Snapshot, source model.Source, now time.Time) bool {
	if prev == nil || !source.Reading || len(prev.Txns) < holdRowsAt {
		return false
	}
	since := prev.RowsAt
	if since.IsZero() {
		since = prev.TakenAt
	}
	return now.Sub(since) < holdRowsFor
}

// markHeld says on a snapshot whose rows were held (holdRows) that ids
// begun since are missing and ended ones may show as open; a pinning
// producer without a visible owner may be one of them, as with ids hidden
// by ACLs.
func markHeld(snap *model.Snapshot) {
	note := fmt.Sprintf("the rows are the listing's of %s, held while %s is read: ids begun since are missing, and those ended since may show open",
		snap.RowsAt.Format("15:04:05"), txnStateTopic)
	snap.Hidden = strings.TrimPrefix(snap.Hidden+"; "+note, "; ")
	for i := range snap.Partitions {
		snap.Partitions[i].OwnersHidden = true
	}
}

// markUnlisted says on the snapshot that some brokers did not list the ids
// they coordinate: unlisted keeps the rows known before, but a first refresh
// has none, and an id new since is missing either way. A pinning producer
// without a visible owner may belong to one of them, as with ids hidden by
// ACLs.
func markUnlisted(snap *model.Snapshot, failed map[int32]error) {
	if len(failed) == 0 {
		return
	}
	var parts []string
	for b, why := range failed {
		parts = append(parts, fmt.Sprintf("broker %d: %s", b, errText(why)))
	}
	sort.Strings(parts)
	note := "some transactional ids may be missing, their coordinators did not list them (" + strings.Join(parts, "; ") + ")"
	snap.Hidden = strings.TrimPrefix(snap.Hidden+"; "+note, "; ")
	for i := range snap.Partitions {
		snap.Partitions[i].OwnersHidden = true
	}
}

// watched returns the partitions to poll: those of open transactions, those
// that were pinned last time, so that a partition stays in view after the
// coordinator forgot its transaction (a hanging transaction), and those the
// user asked to watch.
func watched(prev *model.Snapshot, txns []model.Txn, always []tp) []tp {
	set := make(map[tp]struct{})
	for _, p := range always {
		set[p] = struct{}{}
	}
	for i := range txns { // by index: a copy of each of 2,000,000 rows, twice a refresh, showed
		if t := &txns[i]; t.State.Open() {
			for _, p := range t.Partitions {
				set[p] = struct{}{}
			}
		}
	}
	if prev != nil {
		for _, p := range prev.Partitions {
			if p.Pinned() {
				set[p.TopicPartition] = struct{}{}
			}
		}
	}
	out := make([]tp, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	model.SortPartitions(out)
	return out
}

// applyOutcomes records what the log says about transactions that just ended;
// model.Diff tells a fence or a timeout from the epoch and the deadline.
func applyOutcomes(snap *model.Snapshot, ends []ending, outcomes map[string]model.State) {
	for _, e := range ends {
		o, ok := outcomes[e.id]
		if !ok {
			continue
		}
		i := sort.Search(len(snap.Txns), func(i int) bool { return snap.Txns[i].ID >= e.id })
		if i == len(snap.Txns) || snap.Txns[i].ID != e.id {
			continue
		}
		t := &snap.Txns[i]
		if t.State.Open() || t.State == model.CompleteCommit || t.State == model.CompleteAbort {
			t.SetPrevOutcome(o) // about a transaction before the one t shows
			continue
		}
		t.SetOutcome(o)
	}
}

// applyHidden says what ACLs leave out of the listings. Consumer groups are
// read only while something is pinned, so only then can one be missing.
func applyHidden(snap *model.Snapshot, settings brokerSettings) {
	// The coordinators' log shows every id, DESCRIBE or not.
	if settings.idsHidden && !snap.Source.Log {
		markHidden(snap)
	}
	// A group listed to us whose offsets were refused shows that ListGroups
	// lists groups we may not DESCRIBE (a real broker does so for DESCRIBE on
	// the cluster): it is not hiding any, the refusal already says it all.
	if !settings.groupsHidden || strings.Contains(snap.GroupsErr, kerr.GroupAuthorizationFailed.Message) {
		return
	}
	for _, p := range snap.Partitions {
		if p.Pinned() {
			snap.GroupsErr = strings.TrimSuffix(groupsHiddenNote+"; "+snap.GroupsErr, "; ")
			return
		}
	}
}

// vouchForOwners: a coordinator that has not loaded its transactions lists
// none of them, without an error (owners.go). Only a producer that no listed
// transaction owns draws a conclusion from the listing, so only then, for
// those producers, is listOwners asked whether the coordinators had loaded:
// if not, no producer is judged hanging (H? rather than H!), and the header
// says why. An owner it lists that the snapshot's listing missed (too new for
// it, or missed) holds judgement on its partitions too.
func (c *Client) vouchForOwners(ctx context.Context, snap *model.Snapshot) {
	pids := ownerless(snap)
	if len(pids) == 0 {
		return
	}
	list, hidden, err := c.listOwnersSeen(ctx, pids)
	switch {
	case err != nil:
		snap.Hidden = strings.TrimPrefix(snap.Hidden+"; "+ownersUnknown+": "+err.Error(), "; ")
		for i := range snap.Partitions {
			snap.Partitions[i].OwnersHidden = true
		}
	case hidden:
		markHidden(snap)
	case len(list) > 0:
		late := make(map[int64]bool, len(list))
		for _, l := range list {
			late[l.pid] = true
		}
		for i := range snap.Partitions {
			p := &snap.Partitions[i]
			for _, pr := range p.Producers {
				p.OwnersHidden = p.OwnersHidden || late[pr.ProducerID]
			}
		}
	}
}

// ownersUnknown starts the header note of a snapshot whose owners the
// coordinators could not vouch for.
const ownersUnknown = "owners unknown"

// ownerless returns the producers with an open transaction on a polled
// partition that no listed transaction owns, ascending.
func ownerless(snap *model.Snapshot) []int64 {
	owned := model.ProducersOn(snap) // a bit test per id, not a map delete: 2,000,000 of those were a tenth of a steady TUI's CPU
	var out []int64
	for _, p := range snap.Partitions {
		for _, pr := range p.Producers {
			if _, ok := owned[pr.ProducerID]; pr.CurrentTxnStartOffset >= 0 && !ok {
				out = append(out, pr.ProducerID)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxConfirm bounds the ids confirmLogOwners describes in one refresh.
const maxConfirm = 1000

// confirmLogOwners: the coordinators' log is read a little behind the
// coordinators, and a coordinator that has just moved is read again from
// its new leader, so a row of the log's can be older than what the
// coordinator holds (seen in a rolling restart: an id Empty in the log's
// view while its coordinator had it Ongoing on the partition). Judged on
// that row, the partition its producer pins would be called hanging, and an
// abort offered on a live transaction. So an id whose row leaves a pinning
// producer without its transaction (the id not open, or its transaction not
// listing the partition) is described afresh at its coordinator first, and
// the coordinator's answer replaces the row; an id that cannot be described
// holds judgement on the partitions its producer pins (H?, never H!).
func (c *Client) confirmLogOwners(ctx context.Context, snap *model.Snapshot) {
	// Only the producers that pin a partition are looked up (ProducersOf):
	// a map of every id's producer, made each refresh, was a third of a
	// steady TUI's CPU at 2,000,000 ids.
	var pinned []model.Partition
	for _, p := range snap.Partitions {
		if p.Pinned() {
			pinned = append(pinned, p)
		}
	}
	byPID := model.ProducersOf(snap, pinned)
	doubt := map[string][]int{} // id → the partitions (indexes) it leaves pinned
	for pi, p := range snap.Partitions {
		if !p.Pinned() {
			continue
		}
		for _, pr := range p.Producers {
			if pr.CurrentTxnStartOffset < 0 {
				continue
			}
			t := byPID[pr.ProducerID]
			if t == nil {
				continue // owned by no id in the log: vouchForOwners asks the coordinators
			}
			if !t.State.Open() || !slices.Contains(t.Partitions, p.TopicPartition) {
				doubt[t.ID] = append(doubt[t.ID], pi)
			}
		}
	}
	if len(doubt) == 0 {
		return
	}
	refs := make([]txnRef, 0, len(doubt))
	for id := range doubt {
		refs = append(refs, txnRef{id: id, coord: -1})
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].id < refs[j].id })
	// The log's snapshot shares its rows with the follower, which goes on
	// reading into them: rows are changed on a copy of their own.
	owned := false
	own := func() {
		if !owned {
			snap.Txns, owned = slices.Clone(snap.Txns), true
		}
	}
	held := func(id, why string) {
		for _, pi := range doubt[id] {
			snap.Partitions[pi].OwnersHidden = true
		}
		// An owner not described, with its error, is never judged on (model.OwnersOf).
		if i := sort.Search(len(snap.Txns), func(i int) bool { return snap.Txns[i].ID >= id }); i < len(snap.Txns) && snap.Txns[i].ID == id {
			own()
			snap.Txns[i].Described = false
			snap.Txns[i].Err = "the coordinators' log and the coordinator disagree on it: " + why
		}
	}
	if len(refs) > maxConfirm {
		for _, r := range refs[maxConfirm:] {
			held(r.id, "not described again this refresh")
		}
		refs = refs[:maxConfirm]
	}
	for id, d := range c.describeTxns(ctx, refs) {
		i := sort.Search(len(snap.Txns), func(i int) bool { return snap.Txns[i].ID >= id })
		switch {
		case d.gone:
			held(id, "its coordinator no longer knows it")
			continue
		case d.err != "" || !d.txn.Described:
			held(id, strings.TrimPrefix(d.err, "describe: "))
			continue
		case i == len(snap.Txns) || snap.Txns[i].ID != id:
			continue
		}
		own()
		t := &snap.Txns[i]
		f := d.txn
		t.State, t.Partitions, t.ProducerID, t.ProducerEpoch = f.State, f.Partitions, f.ProducerID, f.ProducerEpoch
		t.StartUnixMs, t.TimeoutMs, t.Coordinator, t.Described, t.Pending = f.StartUnixMs, f.TimeoutMs, f.Coordinator, true, false
	}
}
