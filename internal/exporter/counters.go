package exporter

import "github.com/txnscope/txnscope/model"

// JobKey names a job in the counters' labels.
type JobKey struct{ Job, Family string }

// Counters are the fences, timeouts and aborts per job since the exporter started,
// counted from History's events as they arrive: they never go down, as a
// Prometheus counter must not, even when History forgets an id.
type Counters struct {
	Fences, Timeouts, Aborts map[JobKey]float64
}

// NewCounters is a zero count.
func NewCounters() *Counters {
	return &Counters{Fences: map[JobKey]float64{}, Timeouts: map[JobKey]float64{}, Aborts: map[JobKey]float64{}}
}

// Add counts evs. A Revises event relabels an abort already counted (a
// fence found out later): it adds a fence, not a second abort. Fences are
// the aborts another producer made, timeouts the coordinator's at
// transaction.timeout.ms, as the jobs screen counts them: a SIGTERM-stopped
// job's transactions time out, and nobody fenced them.
func (c *Counters) Add(evs []model.Event) {
	for _, e := range evs {
		if !e.Kind.IsAbort() {
			continue
		}
		j := model.JobOf(e.ID).Job
		k := JobKey{jobName(j), string(j.Family)}
		if !e.Revises {
			c.Aborts[k]++
		}
		switch {
		case e.Kind == model.Fenced || e.Kind == model.ForceTerminated:
			c.Fences[k]++
		case e.Kind == model.TimedOut:
			c.Timeouts[k]++
		}
	}
}
