package kafkaadmin

import "context"

// Ping asks the cluster one light question (a Metadata request for no
// topics) to learn whether it answers at all. The ui calls it every refresh
// interval while refreshes fail, so that it can refresh the moment the cluster
// is back instead of waiting out its backoff: it must cost next to nothing,
// which is why it tries each known broker once, with no retries, rather than
// going through the retrying request path Refresh uses.
func (c *Client) Ping(ctx context.Context) error {
	ctx, cancel := c.scope(ctx)
	defer cancel()
	reqCtx, cancelReq := c.deadline(ctx)
	defer cancelReq()
	if err := c.kgo.Ping(reqCtx); err != nil {
		return whole(ctx, "cannot reach the cluster", err)
	}
	return nil
}

// The ui probes through this method while the cluster is away.
var _ interface{ Ping(context.Context) error } = (*Client)(nil)
