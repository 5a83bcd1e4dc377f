package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txnscope/txnscope/model"
)

func TestPrintTable(t *testing.T) {
	var b bytes.Buffer
	if err := printTable(&b, []string{"Topic", "Partition"}, [][]string{{"orders", "0"}, {"a", "12345678901"}}); err != nil {
		t.Fatal(err)
	}
	// kafka-transactions.sh's layout: padded to the widest cell, a tab after every cell.
	want := "Topic \tPartition  \t\norders\t0          \t\na     \t12345678901\t\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printTable(&b, []string{"ProducerId", "State"}, nil)
	if b.String() != "ProducerId\tState\t\n" {
		t.Errorf("no rows: %q", b.String())
	}
}

func TestConfirm(t *testing.T) {
	ft := model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-0-7", Coordinator: 2, State: model.Ongoing, ProducerID: 40, ProducerEpoch: 3,
		Start: time.Now().Add(-4 * time.Minute), TimeoutMs: 60000, Partitions: []model.TopicPartition{{Topic: "orders", Partition: 1}}}
	ap := model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "orders", Partition: 1}, Leader: 3,
		ProducerID: 41, ProducerEpoch: 0, CoordinatorEpoch: -1, StartOffset: 17, MinIdle: 15 * time.Minute, LastWrite: time.Now().Add(-time.Hour)}
	waived := ap
	waived.IdleWaived = true
	tests := []struct {
		name  string
		a     model.Action
		typed string
		want  bool
	}{
		{"force-terminate confirmed", ft, "abort\n", true},
		{"spaces around the word are fine", ft, "  abort \n", true},
		{"yes is not the word", ft, "yes\n", false},
		{"enter alone cancels", ap, "\n", false},
		{"end of input cancels", ap, "", false},
		{"the word without a newline at the end of input", ap, "abort", true},
		{"case matters, as in the TUI", ap, "ABORT\n", false},
		{"the idle rule set aside takes the longer phrase", waived, "abort anyway\n", true},
		{"abort alone does not set the rule aside", waived, "abort\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			ok, err := confirm(context.Background(), strings.NewReader(tt.typed), &w, nil, tt.a, tt.a.ConfirmWord(), "/var/log/txnscope/audit.log")
			if err != nil || ok != tt.want {
				t.Errorf("confirm = %v, %v; want %v", ok, err, tt.want)
			}
			shown := w.String()
			want := append([]string{tt.a.Wire(), "/var/log/txnscope/audit.log", "Type " + tt.a.ConfirmWord() + " and press enter",
				"refused unless it is this very transaction"}, tt.a.Consequences()...)
			want = append(want, tt.a.Facts(time.Now(), time.Local)[1:]...)
			if tt.a.Kind == model.ForceTerminate {
				// The clock alone: four minutes after midnight the date is shown before it.
				want = append(want, "(4m00s ago)", "Ongoing since ", tt.a.Start.Local().Format("15:04:05.000"))
			}
			for _, s := range want {
				if !strings.Contains(shown, s) {
					t.Errorf("the prompt does not show %q:\n%s", s, shown)
				}
			}
		})
	}
}

func TestConfirmCancelledBySignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw := io.Pipe() // nobody types
	defer pw.Close()
	ok, err := confirm(ctx, pr, io.Discard, nil, model.Action{Kind: model.ForceTerminate, TransactionalID: "x"}, "abort", "a.log")
	if ok || err != errNotConfirmed {
		t.Errorf("confirm after a signal = %v, %v", ok, err)
	}
}

// While the operator reads and types, the target is re-read; the moment it is
// no longer the transaction shown, the prompt says so, once.
func TestConfirmWarnsLive(t *testing.T) {
	defer func(d time.Duration) { recheckEvery = d }(recheckEvery)
	recheckEvery = 5 * time.Millisecond
	a := model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-0-7", State: model.Ongoing, Start: time.Now()}
	var checks atomic.Int64
	recheck := func(context.Context, model.Action) error {
		if checks.Add(1) < 3 {
			return nil
		}
		return errors.New("refused: this is a newer transaction of orders-0-7: it started at 03:12:00.120")
	}
	pr, pw := io.Pipe()
	var w syncBuffer
	done := make(chan bool)
	go func() {
		ok, _ := confirm(context.Background(), pr, &w, recheck, a, a.ConfirmWord(), "a.log")
		done <- ok
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(w.String(), "newer transaction") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // more re-checks, the same news
	io.WriteString(pw, "abort\n")
	<-done
	out := w.String()
	if strings.Count(out, "newer transaction") != 1 || !strings.Contains(out, "! Typing abort now will be refused") {
		t.Errorf("want one warning:\n%s", out)
	}
}

// Ids are anyone's to choose: the prompt shows them escaped.
func TestPromptEscapes(t *testing.T) {
	a := model.Action{Kind: model.ForceTerminate, TransactionalID: "evil\x1b]0;pwned\x07\x1b[2J\r\nforged", State: model.Ongoing, Start: time.Now()}
	out := promptText(a, a.ConfirmWord(), time.Now(), "a.log")
	if strings.ContainsAny(out, "\x1b\x07\r") || !strings.Contains(out, `evil\x1b]0;pwned\x07\x1b[2J\r\nforged`) {
		t.Errorf("prompt = %q", out)
	}
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

// find-hanging's owning id keeps its exact bytes beside the string, as the
// other documents do, when it is not UTF-8.
func TestHangingJSONExactID(t *testing.T) {
	for _, tc := range []struct{ id, b64 string }{{"orders-0-7", ""}, {"orders-\xff-7", "b3JkZXJzLf8tNw=="}} {
		j := toHangingJSON(model.Hanging{TransactionalID: tc.id})
		if j.TransactionalID == nil || *j.TransactionalID != tc.id || j.TransactionalIDBase64 != tc.b64 {
			t.Errorf("toHangingJSON(%q) = %v, %q; want the id and %q", tc.id, j.TransactionalID, j.TransactionalIDBase64, tc.b64)
		}
	}
	if j := toHangingJSON(model.Hanging{}); j.TransactionalID != nil || j.TransactionalIDBase64 != "" {
		t.Errorf("no owner: %+v", j)
	}
}
