package kafkaadmin

// SetPollBudget lets a test on a small cluster see Poll's bound at work.
func SetPollBudget(c *Client, n int) { c.budget = n }
