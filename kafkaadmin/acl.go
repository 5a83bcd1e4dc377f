package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// What a principal may see is decided per resource by the brokers'
// authorizer, and most APIs do not fail but leave out what it may not see:
// ListTransactions drops ids without DESCRIBE, Metadata topics without
// DESCRIBE, ListGroups groups without DESCRIBE. The rest answer an
// *_AUTHORIZATION_FAILED per resource. This file turns both into words that
// start with model.NoPermission, and finds out, cheaply, whether anything is
// being left out.

// authErr reports whether err is an authorization refusal (not a failed
// authentication: that one ends the session).
func authErr(err error) bool {
	return errors.Is(err, kerr.TopicAuthorizationFailed) ||
		errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.ClusterAuthorizationFailed) ||
		errors.Is(err, kerr.TransactionalIDAuthorizationFailed)
}

// probeName is a resource name nobody uses and no ACL names: the brokers
// check the ACLs before looking it up, so the answer tells whether the
// principal may DESCRIBE any name, i.e. sees everything of that kind.
func probeName() string {
	return fmt.Sprintf("txnscope-acl-probe-%016x", rand.Uint64())
}

// idsHidden asks whether ListTransactions hides ids from us: a
// DescribeTransactions of an id that cannot exist answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED when the principal may DESCRIBE only
// some ids, and anything else (NOT_FOUND, NOT_COORDINATOR, ...) when it may
// DESCRIBE all. Any broker will do: the authorizer runs before the
// coordinator lookup, so no FindCoordinator (which would be refused the same
// way) is needed.
func (c *Client) idsHidden(ctx context.Context, brokers []int32) (bool, error) {
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{probeName()}
	resp, err := c.askAny(ctx, brokers, req)
	if err != nil {
		return false, err
	}
	for _, st := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
		return errors.Is(kerr.ErrorForCode(st.ErrorCode), kerr.TransactionalIDAuthorizationFailed), nil
	}
	return false, errors.New("DescribeTransactions: empty answer")
}

// groupsHidden is idsHidden for consumer groups (DescribeGroups checks
// DESCRIBE on the group before the coordinator, too).
func (c *Client) groupsHidden(ctx context.Context, brokers []int32) (bool, error) {
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{probeName()}
	resp, err := c.askAny(ctx, brokers, req)
	if err != nil {
		return false, err
	}
	for _, g := range resp.(*kmsg.DescribeGroupsResponse).Groups {
		return errors.Is(kerr.ErrorForCode(g.ErrorCode), kerr.GroupAuthorizationFailed), nil
	}
	return false, errors.New("DescribeGroups: empty answer")
}

// askAny sends req to the first broker that answers, once each.
func (c *Client) askAny(ctx context.Context, brokers []int32, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	err := errors.New("no broker to ask")
	for _, b := range brokers {
		var resp kmsg.Response
		if resp, err = c.kgo.Broker(int(b)).Request(ctx, req); err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}

// HiddenIDs says, in one line starting with model.HiddenIDs, that ACLs hide
// some transactional ids from this client, or "" when it sees them all. For
// the one-shot commands (list prints it on stderr).
func (c *Client) HiddenIDs(ctx context.Context) (string, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	brokers, err := c.brokerIDs(ctx)
	if err != nil {
		return "", err
	}
	hidden, err := c.idsHidden(ctx, brokers)
	if err != nil || !hidden {
		return "", err
	}
	return hiddenNote(0), nil
}

// hiddenNote is Snapshot.Hidden; held counts the pinned partitions whose
// pinning producer belongs to no visible transaction (owned, most likely, by
// an id we cannot see).
func hiddenNote(held int) string {
	s := model.HiddenIDs + ": you may DESCRIBE only some"
	switch {
	case held == 1:
		s += "; 1 pinned partition is held by a producer you cannot see"
	case held > 1:
		s += fmt.Sprintf("; %d pinned partitions are held by producers you cannot see", held)
	}
	return s
}

// markHidden records on snap that ids are hidden: the note, and on every
// partition that a producer without a visible owner proves nothing.
func markHidden(snap *model.Snapshot) {
	held := 0
	var byPID map[int64]*model.Txn
	for i := range snap.Partitions {
		p := &snap.Partitions[i]
		p.OwnersHidden = true
		pr, ok := p.Pinner()
		if !ok {
			continue
		}
		if byPID == nil {
			byPID = model.ByProducerID(snap)
		}
		if byPID[pr.ProducerID] == nil {
			held++
		}
	}
	snap.Hidden = hiddenNote(held)
}

// groupsHiddenNote is added to Snapshot.GroupsErr when the group probe says
// ListGroups leaves some groups out.
const groupsHiddenNote = model.NoPermission + " to DESCRIBE every consumer group: groups hidden by ACLs are not shown"

// The reads a partition needs, and the ACL each takes.
const (
	needOffsets   = "ListOffsets needs DESCRIBE on the topic"
	needProducers = "DescribeProducers needs READ on the topic"
)

// denial is what a partition may not be read for.
type denial struct {
	offsets, producers bool
	why                string // the broker's first refusal, e.g. TOPIC_AUTHORIZATION_FAILED: ...
}

// text puts the refusal first, so the partition's Err starts with
// model.NoPermission.
func (d denial) text() string {
	switch {
	case d.offsets && d.producers:
		return model.NoPermission + ": " + d.why + " (" + needOffsets + ", " + needProducers + ")"
	case d.offsets:
		return model.NoPermission + " to read the offsets: " + d.why + " (" + needOffsets + ")"
	}
	return model.NoPermission + " to read the producers: " + d.why + " (" + needProducers + ")"
}

// deny records that reading offsets (or the producers) of p was refused.
func (e *partErrs) deny(p tp, offsets bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.denied == nil {
		e.denied = map[tp]denial{}
	}
	d := e.denied[p]
	if d.why == "" {
		d.why = errText(err)
	}
	if offsets {
		d.offsets = true
	} else {
		d.producers = true
	}
	e.denied[p] = d
}

// fill sets part's Err and what was denied.
func (e *partErrs) fill(part *model.Partition) {
	// The log's end is read (logEndsOf) while the producers are still being
	// asked, and file their problems here.
	e.mu.Lock()
	defer e.mu.Unlock()
	d, denied := e.denied[part.TopicPartition]
	part.OffsetsDenied, part.ProducersDenied = d.offsets, d.producers
	var msgs []string
	if denied {
		msgs = append(msgs, d.text())
	}
	for _, m := range e.m[part.TopicPartition] {
		// A topic we may not DESCRIBE is left out of the metadata: that is
		// the refusal again, not news.
		if d.offsets && m == "metadata: topic not reported" {
			continue
		}
		msgs = append(msgs, m)
	}
	part.Err = strings.Join(msgs, "; ")
}

// record files a failed read of p: a refusal apart, anything else as is.
func (e *partErrs) record(p tp, offsets bool, what string, err error) {
	if authErr(err) {
		e.deny(p, offsets, err)
		return
	}
	e.add(p, what+": "+errText(err))
}
