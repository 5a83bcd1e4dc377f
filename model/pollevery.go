package model

import "time"

// listedPerSecond bounds how many ids a refresh by polls lists a second. A
// poll lists every id on every coordinator: at 500,000 ids every 2 s that
// cost three brokers 13–16 % of a core each (docs/performance.md), the log
// costs them about 1 % at any size.
const listedPerSecond = 100_000

// PollEvery is how often a refresh may come after s: base, or when s was
// listed (not read from the coordinators' log) one second per 100,000 ids,
// if that is longer.
func PollEvery(base time.Duration, s *Snapshot) time.Duration {
	if s == nil || s.Source.Log {
		return base
	}
	return max(base, time.Duration(len(s.Txns))*time.Second/listedPerSecond)
}
