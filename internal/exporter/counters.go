package exporter

import "github.com/txnscope/txnscope/model"

// JobKey names a job in the counters' labels.
type JobKey struct{ Job, Family string }

// Counters are the fences and aborts per job since the exporter started,
// counted from History's events as they arrive: they never go down, as a
// Prometheus counter must not, even when History forgets an id.
type Counters struct {
	Fences, Aborts map[JobKey]float64
}

// NewCounters is a zero count.
func NewCounters() *Counters {
	return &Counters{Fences: map[JobKey]float64{}, Aborts: map[JobKey]float64{}}
}

// Add counts evs. A Revises event relabels an abort already counted (a
// fence found out later): it adds a fence, not a second abort. Fences are
// the aborts the producer did not make, as the jobs screen counts them.
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
		if fence(e.Kind) {
			c.Fences[k]++
		}
	}
}

func fence(k model.EventKind) bool {
	return k == model.Fenced || k == model.ForceTerminated || k == model.TimedOut
}
