package integration

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/txnscope/txnscope/kafkaadmin"
	"github.com/txnscope/txnscope/model"
)

// secureLogScope is a logScope logged in as user over SASL_SSL; the Kafka
// client's warnings go to warn.
func secureLogScope(t *testing.T, b *Broker, user string, warn *syncBuffer) *logScope {
	t.Helper()
	requireLoopback(t, b.SecureBootstrap)
	cfg := secureConfig(b, user)
	cfg.FollowLog, cfg.Log = true, warn
	c, err := kafkaadmin.New(cfg)
	if err != nil {
		t.Fatalf("kafkaadmin.New as %s: %v", user, err)
	}
	t.Cleanup(c.Close)
	return &logScope{t: t, c: c, ids: map[string]bool{}}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The coordinators' log needs READ on __transaction_state. A principal
// without it gets the polling path, says why in one line, and raises no
// error: not in a Poll, not in the client's warnings. One with READ (on "*",
// which covers the internal topics) gets the log.
func aclLogNeedsRead(ctx context.Context, t *testing.T, b *Broker, setup *kadm.Client) {
	tp := topicOn(ctx, t, setup)
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, time.Minute)
	openTxn(ctx, t, p, tp, 1, "x")
	endTxn(ctx, t, p, true)

	var warn syncBuffer
	denied := secureLogScope(t, b, aclNoRead, &warn)
	var why string
	for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		snap := denied.poll(ctx)
		if snap.Source.Log || snap.Events != nil {
			t.Fatalf("%s follows the log without READ on it: %+v", aclNoRead, snap.Source)
		}
		if _, ok := snap.Txn(id); !ok {
			t.Fatalf("%s does not see %s through the polls", aclNoRead, id)
		}
		why = snap.Source.Why
	}
	if why != "no READ on __transaction_state" {
		t.Errorf("%s: why %q, want %q", aclNoRead, why, "no READ on __transaction_state")
	}
	if w := warn.String(); strings.Contains(w, "__transaction_state") || strings.Count(w, "\n") > 2 {
		t.Errorf("%s: the refused READ spams the client's warnings:\n%s", aclNoRead, w)
	}

	allowed := secureLogScope(t, b, aclOperator, &syncBuffer{})
	allowed.live(ctx)
	openTxn(ctx, t, p, tp, 1, "y")
	endTxn(ctx, t, p, false)
	evs := allowed.until(ctx, id, func(evs []model.Event) bool { return len(evs) > 0 && evs[len(evs)-1].Kind.Ends() })
	if e := evs[len(evs)-1]; e.Kind != model.Aborted || !e.Logged {
		t.Errorf("%s: %+v, want the abort read from the log", aclOperator, e)
	}
}
