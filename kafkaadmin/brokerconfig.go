package kafkaadmin

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// retryConfigAfter is how soon a failed read of the broker settings is retried.
const retryConfigAfter = 30 * time.Second

// brokerSettings change rarely, so they are cached between refreshes.
type brokerSettings struct {
	// maxTimeoutMs is the smallest transaction.max.timeout.ms of the brokers (0: unknown).
	maxTimeoutMs int64
	// bumpsOnEnd: the brokers speak EndTxn v5+ (transaction version 2), where
	// every commit or abort bumps the producer epoch.
	bumpsOnEnd bool
	// idsHidden and groupsHidden: the ACL probes (acl.go) say ListTransactions
	// and ListGroups leave some out. They change as rarely as the rest.
	idsHidden, groupsHidden bool
	next                    time.Time
}

// brokerSettings returns the cached settings, re-reading them when due.
func (c *Client) brokerSettings(ctx context.Context, brokers []int32) brokerSettings {
	c.mu.Lock()
	s := c.settings
	c.mu.Unlock()
	now := time.Now()
	if now.Before(s.next) {
		return s
	}
	s, complete := c.readBrokerSettings(ctx, brokers, s)
	if complete {
		s.next = now.Add(c.cfg.ConfigEvery)
	} else {
		s.next = now.Add(retryConfigAfter)
	}
	c.mu.Lock()
	c.settings = s
	c.mu.Unlock()
	return s
}

// knownMaxTimeoutMs is the cached transaction.max.timeout.ms (0: not read yet).
func (c *Client) knownMaxTimeoutMs() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.settings.maxTimeoutMs
}

// readBrokerSettings reads each setting afresh; one that fails keeps its old
// value, and complete is false when a retry could do better. A refusal
// (no DESCRIBE_CONFIGS on the cluster) will not change in 30 s: it waits for
// the normal cadence.
func (c *Client) readBrokerSettings(ctx context.Context, brokers []int32, old brokerSettings) (s brokerSettings, complete bool) {
	var (
		wg                     sync.WaitGroup
		maxMs                  int64
		v2, ids, groups        bool
		cfgErr, verErr         error
		idsErr, groupsProbeErr error
	)
	wg.Go(func() { maxMs, cfgErr = c.maxTxnTimeout(ctx, brokers) })
	wg.Go(func() { v2, verErr = c.speaksTxnV2(ctx) })
	wg.Go(func() { ids, idsErr = c.idsHidden(ctx, brokers) })
	wg.Go(func() { groups, groupsProbeErr = c.groupsHidden(ctx, brokers) })
	wg.Wait()
	s, complete = old, true
	keep := func(err error) bool {
		if err != nil && !authErr(err) {
			complete = false
		}
		return err == nil
	}
	if keep(cfgErr) {
		s.maxTimeoutMs = maxMs
	}
	if keep(verErr) {
		s.bumpsOnEnd = v2
	}
	if keep(idsErr) {
		s.idsHidden = ids
	}
	if keep(groupsProbeErr) {
		s.groupsHidden = groups
	}
	return s, complete
}

const maxTimeoutKey = "transaction.max.timeout.ms"

// brokerConfigRequest asks every broker of brokers for one setting.
func brokerConfigRequest(brokers []int32, name string) *kmsg.DescribeConfigsRequest {
	req := kmsg.NewPtrDescribeConfigsRequest()
	for _, b := range brokers {
		r := kmsg.NewDescribeConfigsRequestResource()
		r.ResourceType = kmsg.ConfigResourceTypeBroker
		r.ResourceName = strconv.Itoa(int(b))
		r.ConfigNames = []string{name}
		req.Resources = append(req.Resources, r)
	}
	return req
}

// maxTxnTimeout reads transaction.max.timeout.ms from every broker and keeps the
// smallest: a client timeout above it is refused by that broker.
func (c *Client) maxTxnTimeout(ctx context.Context, brokers []int32) (int64, error) {
	if len(brokers) == 0 {
		return 0, errors.New("no brokers")
	}
	req := brokerConfigRequest(brokers, maxTimeoutKey)
	rctx, cancel := c.deadline(ctx)
	defer cancel()
	var (
		best    int64
		lastErr error
	)
	shards := c.kgo.RequestSharded(rctx, req)
	noteSilentShards(ctx, rctx, shards)
	for _, sh := range shards {
		if sh.Err != nil {
			lastErr = sh.Err
			continue
		}
		for _, r := range sh.Resp.(*kmsg.DescribeConfigsResponse).Resources {
			if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
				lastErr = err
				continue
			}
			for _, cf := range r.Configs {
				if cf.Name != maxTimeoutKey || cf.Value == nil {
					continue
				}
				v, err := strconv.ParseInt(*cf.Value, 10, 64)
				if err != nil || v <= 0 {
					continue
				}
				if best == 0 || v < best {
					best = v
				}
			}
		}
	}
	if best == 0 {
		if lastErr == nil {
			lastErr = errors.New(maxTimeoutKey + " not reported")
		}
		return 0, lastErr
	}
	return best, nil
}

// speaksTxnV2 asks any broker whether the cluster runs transaction version
// 2: its finalized transaction.version, not the EndTxn versions it serves (a
// 4.x broker serves EndTxn v5 while a cluster upgraded from 3.x stays at
// version 1 until an operator raises it; observed on 4.0.2).
func (c *Client) speaksTxnV2(ctx context.Context) (bool, error) {
	av, err := c.apiVersions(ctx, c.kgo)
	if err != nil {
		return false, err
	}
	endTxnV5 := false
	for _, k := range av.ApiKeys {
		if k.ApiKey == int16(kmsg.EndTxn) {
			endTxnV5 = k.MaxVersion >= 5
		}
	}
	for _, f := range av.FinalizedFeatures {
		if f.Name == "transaction.version" {
			return endTxnV5 && f.MaxVersionLevel >= 2, nil
		}
	}
	return false, nil
}

// requester is the client (any broker) or one broker.
type requester interface {
	Request(context.Context, kmsg.Request) (kmsg.Response, error)
}

// apiVersions asks r which requests and features it serves.
func (c *Client) apiVersions(ctx context.Context, r requester) (*kmsg.ApiVersionsResponse, error) {
	ctx, cancel := c.deadline(ctx)
	defer cancel()
	req := kmsg.NewPtrApiVersionsRequest()
	// v3+ refuses a request without a client name (INVALID_REQUEST).
	req.ClientSoftwareName, req.ClientSoftwareVersion = "txnscope", "1"
	resp, err := r.Request(ctx, req)
	if err != nil {
		return nil, err
	}
	av := resp.(*kmsg.ApiVersionsResponse)
	if err := kerr.ErrorForCode(av.ErrorCode); err != nil {
		return nil, err
	}
	return av, nil
}
