package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/model"
)

// The one-shot commands (txnscope list, describe, ...) ask exactly what
// kafka-transactions.sh asks, once, and return the raw answers.

// Listing is one row of ListTransactions.
type Listing struct {
	TransactionalID string
	Coordinator     int32
	ProducerID      int64
	State           model.State
}

// ListOptions filters ListTransactions on the brokers.
type ListOptions struct {
	// DurationFilterMs keeps transactions running longer than this many
	// milliseconds; negative keeps all (ListTransactions v1, Kafka 3.8+).
	DurationFilterMs int64
	// Pattern is a regular expression on the id, evaluated by the brokers
	// (ListTransactions v2, Kafka 4.1+); empty keeps all.
	Pattern string
	// States keeps the transactions in these states (as Kafka spells
	// them); none keeps all. At 2,000,000 ids, "Ongoing" is a listing of
	// the open ones only.
	States []string
}

// BrokerError is a broker that did not answer a request sent to every broker.
type BrokerError struct {
	Broker int32
	Err    error
}

func (e BrokerError) Error() string {
	if e.Broker < 0 { // kgo failed before it knew the brokers (a refused login, say)
		return errText(e.Err)
	}
	return fmt.Sprintf("broker %d: %s", e.Broker, errText(e.Err))
}
func (e BrokerError) Unwrap() error { return e.Err }

// ListTransactions asks every broker for the transactions it coordinates,
// sorted by id. When some brokers fail, it returns what the others listed and
// an error naming the failed ones.
func (c *Client) ListTransactions(ctx context.Context, o ListOptions) ([]Listing, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	dctx, dcancel := c.deadline(ctx)
	defer dcancel()
	req := kmsg.NewPtrListTransactionsRequest()
	req.DurationFilterMillis = o.DurationFilterMs
	if o.Pattern != "" {
		req.TransactionalIDPattern = kmsg.StringPtr(o.Pattern)
	}
	req.StateFilters = o.States
	shards := c.kgo.RequestSharded(dctx, req)
	if len(shards) == 0 {
		return nil, errors.New("ListTransactions: no broker to ask")
	}
	// Real Kafka lists each id once, on its coordinator; kfake on every
	// broker. Only listings from more than one broker are checked for it:
	// at 2,000,000 ids the map was a tenth of the command's CPU.
	var seen map[string]bool
	if len(shards) > 1 {
		seen = map[string]bool{}
	}
	var out []Listing
	var errs []error
	for _, sh := range shards {
		b := sh.Meta.NodeID
		if sh.Err != nil {
			errs = append(errs, BrokerError{b, sh.Err})
			continue
		}
		resp := sh.Resp.(*kmsg.ListTransactionsResponse)
		// kgo silently drops fields a broker's version does not know: a
		// filter the broker never saw must not look like an empty result.
		switch v := resp.GetVersion(); {
		case o.DurationFilterMs >= 0 && v < 1:
			errs = append(errs, BrokerError{b, fmt.Errorf("the duration filter needs ListTransactions v1 (Kafka 3.8+), the broker speaks v%d", v)})
			continue
		case o.Pattern != "" && v < 2:
			errs = append(errs, BrokerError{b, fmt.Errorf("the transactional id pattern needs ListTransactions v2 (Kafka 4.1+), the broker speaks v%d", v)})
			continue
		}
		if e := kerr.ErrorForCode(resp.ErrorCode); e != nil {
			errs = append(errs, BrokerError{b, e})
			continue
		}
		if len(resp.UnknownStateFilters) > 0 {
			// It would list nothing in them: say so rather than look empty.
			errs = append(errs, BrokerError{b, fmt.Errorf("the broker does not know the state %s", strings.Join(resp.UnknownStateFilters, ", "))})
			continue
		}
		out = slices.Grow(out, len(resp.TransactionStates))
		for _, ts := range resp.TransactionStates {
			if seen != nil {
				if seen[ts.TransactionalID] {
					continue
				}
				seen[ts.TransactionalID] = true
			}
			out = append(out, Listing{TransactionalID: ts.TransactionalID, Coordinator: b, ProducerID: ts.ProducerID, State: model.StateOf(ts.TransactionState)})
		}
	}
	slices.SortFunc(out, func(a, b Listing) int { return strings.Compare(a.TransactionalID, b.TransactionalID) })
	return out, joinErrs("ListTransactions", errs)
}

// joinErrs makes one line out of several failures.
func joinErrs(what string, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	sort.Strings(msgs)
	return fmt.Errorf("%s: %s", what, strings.Join(msgs, "; "))
}

// Description is one transactional id as DescribeTransactions reports it.
type Description struct {
	model.Txn
	// StartMs is the coordinator's start timestamp of the current (or last)
	// transaction in epoch milliseconds, -1 when it reports none. Txn.StartUnixMs
	// is set only while a transaction is open; StartMs is what it said.
	StartMs int64
}

// ErrNotFound is the coordinator's TRANSACTIONAL_ID_NOT_FOUND.
var ErrNotFound = errors.New("TRANSACTIONAL_ID_NOT_FOUND: the transactional id could not be found")

// DescribeTransaction asks the id's coordinator about it.
func (c *Client) DescribeTransaction(ctx context.Context, id string) (Description, error) {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	dctx, dcancel := c.deadline(ctx)
	defer dcancel()
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{id}
	for _, sh := range c.kgo.RequestSharded(dctx, req) {
		if sh.Err != nil {
			if d := describeFailed(sh.Err); d.denied != "" {
				return Description{}, fmt.Errorf("%s: %s", id, d.err)
			}
			// A failure on the way to the coordinator (a refused login, say)
			// reaches us without the broker's reason; a direct request has it.
			if _, err := c.brokerIDs(ctx); err != nil {
				return Description{}, whole(ctx, "cannot reach the cluster", err)
			}
			return Description{}, fmt.Errorf("describe %s: %s", id, errText(sh.Err))
		}
		for _, st := range sh.Resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
			if st.TransactionalID != id {
				continue
			}
			d := fromDescribe(st, sh.Meta.NodeID)
			switch {
			case d.gone:
				return Description{}, fmt.Errorf("describe %s: %w", id, ErrNotFound)
			case d.err != "":
				return Description{}, fmt.Errorf("%s: %s", id, d.err)
			}
			return Description{Txn: d.txn, StartMs: st.StartTimestamp}, nil
		}
	}
	return Description{}, fmt.Errorf("describe %s: no answer for this id", id)
}
