package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A transactional id lives in one partition of __transaction_state, and that
// partition's leader is its coordinator. A broker that has just become leader
// (started, or unfenced) loads the partition before it knows its ids; one that
// has just lost it knows none. Kafka's TransactionStateManager then answers
// DescribeTransactions, per id, COORDINATOR_LOAD_IN_PROGRESS (loading) or
// NOT_COORDINATOR (not held); but ListTransactions answers an empty list,
// without error, on a broker that holds no partition yet, and fails only while
// one loads. So a listing alone cannot tell "no owner" from "not loaded yet"
// (seen on Kafka 4.4 for 0.2 s to a second after a fenced broker came back).
// listOwners settles it with one probe id per partition, described on every
// broker before and after the listing.

const (
	txnStateTopic = "__transaction_state"
	// txnStatePartitionsKey is the brokers' setting, read when the topic's
	// metadata is refused.
	txnStatePartitionsKey = "transaction.state.log.num.partitions"
	// defaultTxnStatePartitions is its default: the probes used when the
	// cluster has no such topic (kfake; a cluster that never saw a
	// transaction, where every probe then finds no coordinator).
	defaultTxnStatePartitions = 50
	// maxTxnStatePartitions bounds the probes of one request.
	maxTxnStatePartitions = 10000
	loadProbePrefix       = "txnscope-load-probe-"
)

// notLoaded starts every reason listOwners gives.
const notLoaded = "an owner may be missing from the listing, not every coordinator is known to be loaded"

// listOwners is listTxnsOn filtered by pids, for callers that conclude "no
// owner" from an id's absence (find-hanging, the partition abort's re-check).
// It returns an error, whose text says why and reads well after "refused: ",
// unless every broker answered the listing and every __transaction_state
// partition was held loaded by a broker that still held it, at the same
// leader epoch, after the listing.
func (c *Client) listOwners(ctx context.Context, pids []int64) (map[string]listed, error) {
	list, _, err := c.listOwnersSeen(ctx, pids)
	return list, err
}

// listOwnersSeen is listOwners that also reports hidden: ACLs refuse the
// probes (the principal may DESCRIBE only some ids), so whether the
// coordinators have loaded cannot be checked. An absent owner proves nothing
// then anyway, so the listing is returned, vouching only for the ids it
// shows: find-hanging and the partition abort's re-check take hidden as ids
// hidden by ACLs (the re-check asks the ACL probe too: ACLs may let one
// probe through and not the other).
func (c *Client) listOwnersSeen(ctx context.Context, pids []int64) (list map[string]listed, hidden bool, err error) {
	brokers, err := c.brokerIDs(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("cannot tell which brokers coordinate transactions: %s", errText(err))
	}
	before, err := c.coordsBefore(ctx, brokers)
	if err != nil {
		return nil, false, err
	}
	list, failed, err := c.listTxnsOn(ctx, pids, brokers)
	if err != nil {
		return nil, false, err
	}
	if len(failed) > 0 {
		errs := make([]error, 0, len(failed))
		for b, why := range failed {
			errs = append(errs, BrokerError{b, why})
		}
		return nil, false, joinErrs("ListTransactions did not answer on every broker", errs)
	}
	if before.hidden {
		return list, true, nil
	}
	after, err := c.coordsAfter(ctx, brokers, len(before.held))
	switch {
	case err != nil:
		return nil, false, err
	case after.hidden:
		return nil, false, fmt.Errorf("%s: the probes were refused after the listing (ACLs changed?)", notLoaded)
	}
	if err := sameCoords(before, after); err != nil {
		return nil, false, err
	}
	return list, false, nil
}

// coordView is who held each __transaction_state partition loaded at one
// moment: by partition, the brokers that answered its probe cleanly, with its
// leader epoch in their own metadata (-1: unknown). Two at once happens while
// a partition moves; each one's listing has every id it holds.
type coordView struct {
	held   [][]holder
	hidden bool // ACLs refused the probes
}

type holder struct{ broker, epoch int32 }

// coordsBefore reads each broker's metadata, then probes: a leader epoch
// that moves afterwards is seen by the second read.
func (c *Client) coordsBefore(ctx context.Context, brokers []int32) (coordView, error) {
	meta := c.txnStateMeta(ctx, brokers)
	n, err := c.txnStatePartitions(ctx, brokers, meta)
	if err != nil {
		return coordView{}, err
	}
	probes, err := loadProbes(n)
	if err != nil {
		return coordView{}, err
	}
	return judgeProbes(brokers, probes, meta, c.probe(ctx, brokers, probes))
}

// coordsAfter probes, then reads the metadata: the mirror of coordsBefore.
func (c *Client) coordsAfter(ctx context.Context, brokers []int32, n int) (coordView, error) {
	probes, err := loadProbes(n)
	if err != nil {
		return coordView{}, err
	}
	answers := c.probe(ctx, brokers, probes)
	meta := c.txnStateMeta(ctx, brokers)
	now, err := c.txnStatePartitions(ctx, brokers, meta)
	switch {
	case err != nil:
		return coordView{}, err
	case now != n:
		return coordView{}, fmt.Errorf("%s: %s went from %d to %d partitions during the listing", notLoaded, txnStateTopic, n, now)
	}
	return judgeProbes(brokers, probes, meta, answers)
}

// sameCoords checks that each partition was held loaded, before and after
// the listing, by one broker at one leader epoch: then it was all along (a
// new term brings a new epoch), and that broker's listing had its ids.
func sameCoords(before, after coordView) error {
	gaps := map[int]string{}
	for p := range before.held {
		b, a := before.held[p], after.held[p]
		if heldThroughout(b, a) {
			continue
		}
		gaps[p] = fmt.Sprintf("moved from broker %d to broker %d during the listing", b[0].broker, a[0].broker)
		for _, x := range b {
			for _, y := range a {
				if x.broker == y.broker {
					gaps[p] = fmt.Sprintf("leader epoch %d→%d at broker %d during the listing", x.epoch, y.epoch, x.broker)
				}
			}
		}
	}
	return gapsErr(gaps, len(before.held))
}

func heldThroughout(before, after []holder) bool {
	for _, x := range before {
		for _, y := range after {
			if x == y {
				return true
			}
		}
	}
	return false
}

// judgeProbes finds, for each partition, the brokers that hold it loaded;
// one loading it, or none holding it, is a gap. answers and meta are by
// broker; probes[p] is partition p's probe id.
func judgeProbes(brokers []int32, probes []string, meta map[int32]txnStateView, answers map[int32]probeAnswers) (coordView, error) {
	for _, b := range brokers {
		if err := answers[b].err; err != nil {
			return coordView{}, fmt.Errorf("%s: broker %d did not answer: %s", notLoaded, b, errText(err))
		}
	}
	v := coordView{held: make([][]holder, len(probes))}
	gaps := map[int]string{}
	for p, id := range probes {
		var loading []int32
		var other []string
		for _, b := range brokers {
			code, ok := answers[b].codes[id]
			switch {
			case !ok:
				other = append(other, fmt.Sprintf("broker %d: no answer", b))
			case code == 0 || code == kerr.TransactionalIDNotFound.Code:
				h, why := holds(b, p, meta[b])
				if why != "" {
					other = append(other, why)
					continue
				}
				v.held[p] = append(v.held[p], h)
			case code == kerr.CoordinatorLoadInProgress.Code:
				loading = append(loading, b)
			case code == kerr.TransactionalIDAuthorizationFailed.Code:
				v.hidden = true
			default:
				other = append(other, fmt.Sprintf("broker %d: %s", b, codeName(code)))
			}
		}
		switch {
		case len(loading) > 0:
			gaps[p] = fmt.Sprintf("broker %d is loading it (%s)", loading[0], kerr.CoordinatorLoadInProgress.Message)
		case len(v.held[p]) == 0:
			gaps[p] = fmt.Sprintf("no broker holds it (%s)", joinSorted(other))
		}
	}
	if v.hidden {
		return coordView{hidden: true}, nil
	}
	return v, gapsErr(gaps, len(probes))
}

// holds is broker b answering partition p's probe cleanly, with the epoch its
// own metadata gives p; why is set when that metadata names another leader
// (b is letting it go).
func holds(b int32, p int, m txnStateView) (h holder, why string) {
	h = holder{broker: b, epoch: -1}
	if !m.exists {
		return h, ""
	}
	if l := m.leader[p]; l != b {
		return h, fmt.Sprintf("broker %d answers for it, its metadata names leader %d", b, l)
	}
	h.epoch = m.epoch[p]
	return h, ""
}

// gapsErr names the first partition not known loaded, and how many more.
func gapsErr(gaps map[int]string, n int) error {
	if len(gaps) == 0 {
		return nil
	}
	first := math.MaxInt
	for p := range gaps {
		first = min(first, p)
	}
	more := ""
	if len(gaps) > 1 {
		more = fmt.Sprintf(" (and %d more of its %d partitions)", len(gaps)-1, n)
	}
	return fmt.Errorf("%s: %s partition %d: %s%s", notLoaded, txnStateTopic, first, gaps[first], more)
}

func codeName(code int16) string {
	var ke *kerr.Error
	if errors.As(kerr.ErrorForCode(code), &ke) {
		return ke.Message
	}
	return "error code " + strconv.Itoa(int(code))
}

// joinSorted joins the first few of s, sorted, and counts the rest: one line
// even with a hundred brokers.
func joinSorted(s []string) string {
	const few = 3
	sort.Strings(s)
	if len(s) <= few {
		return strings.Join(s, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(s[:few], "; "), len(s)-few)
}

// javaHash is Java's String.hashCode, over UTF-16 code units.
func javaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// txnPartition is the __transaction_state partition of id among n, as Kafka
// computes it: Utils.abs (which maps MinInt32 to 0) of the hash, modulo n.
func txnPartition(id string, n int) int {
	h := javaHash(id)
	switch {
	case h == math.MinInt32:
		h = 0
	case h < 0:
		h = -h
	}
	return int(h) % n
}

var probeSets sync.Map // partition count → []string

// loadProbes returns one id per partition of a __transaction_state of n
// partitions: probes[p] lives in partition p. Nobody uses these ids, so a
// coordinator that holds p loaded answers TRANSACTIONAL_ID_NOT_FOUND.
func loadProbes(n int) ([]string, error) {
	if v, ok := probeSets.Load(n); ok {
		return v.([]string), nil
	}
	if n <= 0 || n > maxTxnStatePartitions {
		return nil, fmt.Errorf("%s: %s has %d partitions, more than txnscope probes (%d)", notLoaded, txnStateTopic, n, maxTxnStatePartitions)
	}
	probes := make([]string, n)
	left := n
	for k := 0; left > 0 && k < 1000*n; k++ {
		id := loadProbePrefix + strconv.Itoa(k)
		if p := txnPartition(id, n); probes[p] == "" {
			probes[p] = id
			left--
		}
	}
	if left > 0 {
		return nil, fmt.Errorf("%s: no probe id found for %d of %s's %d partitions", notLoaded, left, txnStateTopic, n)
	}
	probeSets.Store(n, probes)
	return probes, nil
}

// probeAnswers is one broker's answer to the probes: error code by id.
type probeAnswers struct {
	codes map[string]int16
	err   error
}

// probe describes the probes on every broker, once each, in parallel: a
// retry or a coordinator lookup would hide what each broker says.
func (c *Client) probe(ctx context.Context, brokers []int32, probes []string) map[int32]probeAnswers {
	out := make(map[int32]probeAnswers, len(brokers))
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, b := range brokers {
		wg.Go(func() {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = probes
			var a probeAnswers
			resp, err := c.askBroker(ctx, b, req)
			if err != nil {
				a.err = err
			} else {
				a.codes = make(map[string]int16, len(probes))
				for _, st := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
					a.codes[st.TransactionalID] = st.ErrorCode
				}
			}
			mu.Lock()
			out[b] = a
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// askBroker sends req to one broker, once.
func (c *Client) askBroker(ctx context.Context, b int32, req kmsg.Request) (kmsg.Response, error) {
	if err := silentErr(ctx, b); err != nil {
		return nil, err
	}
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	resp, err := c.kgo.Broker(int(b)).Request(rctx, req)
	noteSilent(ctx, rctx, b, err)
	return resp, err
}
