package model

import "time"

// listedPerSecond bounds how many ids a refresh by polls lists a second. A
// poll lists every id on every coordinator: at 500,000 ids every 2 s that
// cost three brokers 13–16 % of a core each (docs/performance.md), the log
// costs them about 1 % at any size.
const listedPerSecond = 100_000

// loggedPerSecond bounds how many ids a refresh from the log takes in a
// second. Such a refresh asks Kafka nothing per id, but taking a snapshot in
// is still a pass over every row (the rows' order, the header's counts, the
// pinned partitions' owners): at 2,000,000 ids every 2 s that was 16 % of a
// core (docs/performance.md).
const loggedPerSecond = 500_000

// PollEvery is how often a refresh may come after s: base, or one second
// per 100,000 ids when s was listed, per 500,000 when it was read from the
// coordinators' log, if that is longer.
func PollEvery(base time.Duration, s *Snapshot) time.Duration {
	if s == nil {
		return base
	}
	per := listedPerSecond
	if s.Source.Log {
		per = loggedPerSecond
	}
	return max(base, time.Duration(len(s.Txns))*time.Second/time.Duration(per))
}
