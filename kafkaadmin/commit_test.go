package kafkaadmin_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/model"
)

// On kfake (transaction version 1: a producer keeps its producer id and
// epoch from one transaction to the next), the commit is made to meet a
// newer transaction of the same producer at every point where it could slip
// in: while the checkpoint evidence is read (a JobManager may take seconds),
// and between an answer that did nothing and the retry. Either way nothing
// may commit the newer transaction.
func TestCommitNeverMeetsTheNextTransaction(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		// during runs turnover at the moment it means; retry says the
		// first EndTxn is answered NOT_COORDINATOR.
		retry bool
	}{
		{name: "turned over while the evidence was read"},
		{name: "turned over between NOT_COORDINATOR and the retry", retry: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cl, boot := kafkatest.NewCluster(t)
			const id = "sink-0-7"
			p := kafkatest.Producer(t, boot, id, 10*time.Minute)
			kafkatest.Begin(t, p)
			kafkatest.Produce(t, p, "orders", 0, 3)
			a := newAdmin(t, boot)
			tx := txnOf(t, refresh(t, a, nil), id)
			turnover := func() {
				kafkatest.End(t, p, true)
				kafkatest.Begin(t, p)
				kafkatest.Produce(t, p, "orders", 0, 1)
			}
			var reads, endTxns atomic.Int32
			rv := func(context.Context, model.Txn) (model.CommitEvidence, error) {
				n := reads.Add(1)
				if (!c.retry && n == 2) || (c.retry && n == 3) {
					turnover()
				}
				return model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 7, Evidence: "chk-7"},
					FlinkState: "FAILED"}, nil
			}
			ev, _ := rv(context.Background(), tx)
			act, err := model.PlanCommit(tx, ev, false)
			if err != nil {
				t.Fatal(err)
			}
			act.Reverify = rv
			cl.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
				cl.KeepControl()
				if endTxns.Add(1) == 1 && c.retry {
					resp := req.ResponseKind().(*kmsg.EndTxnResponse)
					resp.ErrorCode = kerr.NotCoordinator.Code
					return resp, nil, true
				}
				return nil, nil, false
			})
			j := &kafkatest.Journal{}
			r := a.Execute(context.Background(), act, j)
			t.Logf("%s", r.Summary())
			// The producer's own EndTxn passes the control too: txnscope's
			// are the ones its audit trail recorded.
			wantSent := map[bool]int{false: 0, true: 1}[c.retry]
			if r.OK() || len(j.Tries()) != wantSent || r.Sends != wantSent || !strings.Contains(r.Summary(), "this is a newer transaction") {
				t.Fatalf("result %+v, tries %v: want the newer transaction refused after %d EndTxn", r, j.Tries(), wantSent)
			}
			// The newer one is still its producer's to commit.
			now := txnOf(t, refresh(t, a, nil), id)
			if now.State != model.Ongoing {
				t.Errorf("the newer transaction is %s", now.State)
			}
			kafkatest.End(t, p, true)
		})
	}
}

// A JobManager that answered once and then does not (or says something
// else) stops the commit before anything is sent: the verdict is asked
// again and must hold.
func TestCommitEvidenceFlaps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ev   func() (model.CommitEvidence, error)
		want string
	}{
		{"the JobManager went away", func() (model.CommitEvidence, error) {
			return model.CommitEvidence{}, errors.New("GET /jobs/overview: connection refused")
		}, "the checkpoint evidence could not be read again: GET /jobs/overview: connection refused"},
		{"another run now", func() (model.CommitEvidence, error) {
			return model.CommitEvidence{Verdict: model.Verdict{Kind: model.VerdictUnknown, Evidence: "it began before the run Flink lists started"}, FlinkState: "RUNNING"}, nil
		}, "Flink says its job is RUNNING"},
		{"an older checkpoint", func() (model.CommitEvidence, error) {
			return model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 6}, FlinkState: "FAILED"}, nil
		}, "went back from checkpoint 7 to 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tg := commitTarget(t)
			planned := tg.act.Reverify
			first := true
			tg.act.Reverify = func(ctx context.Context, tx model.Txn) (model.CommitEvidence, error) {
				if first {
					first = false
					return c.ev()
				}
				return planned(ctx, tx)
			}
			j := &kafkatest.Journal{}
			r := tg.a.Execute(context.Background(), tg.act, j)
			if !r.Refused || r.Sent || len(j.Tries()) != 0 || !strings.Contains(r.Err, c.want) {
				t.Fatalf("result %+v: want refused, nothing sent, saying %q", r, c.want)
			}
			if tg.inj.count(kmsg.EndTxn) != 0 {
				t.Error("an EndTxn reached the cluster")
			}
		})
	}
}

// A resolve's force-terminate rests on its checkpoint never having
// completed: asked again before the request, an answer that now says
// checkpointed, or that the job runs, sends nothing.
func TestResolveAbortReverified(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		ev   model.CommitEvidence
		want string
	}{
		{"checkpoint completed since", model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Evidence: "chk-8 appeared"}}, "commit it instead"},
		{"the job came back", model.CommitEvidence{Verdict: model.Verdict{Kind: model.NotCheckpointed}, FlinkState: "RUNNING"}, "would fence a live producer"},
		{"no longer known", model.CommitEvidence{Verdict: model.Verdict{Kind: model.VerdictUnknown, Evidence: "the JobManager did not answer"}}, "no longer known"},
		{"still not checkpointed", model.CommitEvidence{Verdict: model.Verdict{Kind: model.NotCheckpointed}, FlinkState: "FAILED"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tg := forceTarget(t)
			tg.act.Reverify = func(context.Context, model.Txn) (model.CommitEvidence, error) { return c.ev, nil }
			j := &kafkatest.Journal{}
			r := tg.a.Execute(context.Background(), tg.act, j)
			if c.want == "" {
				if !r.OK() {
					t.Fatalf("still not checkpointed, yet %s", r.Summary())
				}
				return
			}
			if !r.Refused || r.Sent || len(j.Tries()) != 0 || !strings.Contains(r.Err, c.want) {
				t.Fatalf("result %+v: want refused, nothing sent, saying %q", r, c.want)
			}
		})
	}
}

// The request rests on the evidence read just before it, and the audit
// trail records that evidence, not the plan's; a refusal that holds for
// the whole job (Flink says it may run, the JobManager went silent) is
// marked so that a batch stops.
func TestCommitRestsOnTheRecheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		ev      model.CommitEvidence
		sent    bool
		jobWide bool
	}{
		{"the same basis, read again", model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 8, Evidence: "chk-8 holds it now"},
			FlinkState: "FAILED", At: time.Now()}, true, false},
		{"SUSPENDED: a JobManager that lost its leadership", model.CommitEvidence{Verdict: model.Verdict{Kind: model.Checkpointed, Checkpoint: 7, CompletedIn: 7},
			FlinkState: "SUSPENDED"}, false, true},
		{"the JobManager went silent", model.CommitEvidence{Verdict: model.Verdict{Kind: model.VerdictUnknown, Evidence: "the JobManager at http://jm:8081 did not answer (GET /jobs/overview: 500 Internal Server Error)",
			Basis: model.Basis{JobManagers: []string{"http://jm:8081"}, NoFlink: "the JobManager at http://jm:8081 did not answer"}}}, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tg := commitTarget(t)
			tg.act.Reverify = func(context.Context, model.Txn) (model.CommitEvidence, error) { return c.ev, nil }
			j := &kafkatest.Journal{}
			r := tg.a.Execute(context.Background(), tg.act, j)
			if r.OK() != c.sent || r.JobWide != c.jobWide {
				t.Fatalf("%s (job-wide %v), want sent %v, job-wide %v", r.Summary(), r.JobWide, c.sent, c.jobWide)
			}
			// The trail holds what was read, what the request went on or
			// was refused for.
			if ev := j.Evidence(); len(ev) != 1 || ev[0].Verdict.Evidence != c.ev.Verdict.Evidence || ev[0].FlinkState != c.ev.FlinkState {
				t.Errorf("the trail recorded %+v, want the re-check's evidence", ev)
			}
			if !c.sent && tg.inj.count(kmsg.EndTxn) != 0 {
				t.Error("refused, yet an EndTxn was sent")
			}
		})
	}
}
