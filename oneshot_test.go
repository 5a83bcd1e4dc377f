package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

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
	ft := model.Action{Kind: model.ForceTerminate, TransactionalID: "orders-0-7", Coordinator: 2, State: model.Ongoing, ProducerID: 40, ProducerEpoch: 3}
	ap := model.Action{Kind: model.AbortPartition, TopicPartition: model.TopicPartition{Topic: "orders", Partition: 1}, Leader: 3,
		ProducerID: 41, ProducerEpoch: 0, CoordinatorEpoch: -1, StartOffset: 17}
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w bytes.Buffer
			ok, err := confirm(context.Background(), strings.NewReader(tt.typed), &w, tt.a, "/var/log/txnscope/audit.log")
			if err != nil || ok != tt.want {
				t.Errorf("confirm = %v, %v; want %v", ok, err, tt.want)
			}
			shown := w.String()
			for _, s := range append([]string{tt.a.Wire(), "/var/log/txnscope/audit.log", "Type abort and press enter"}, tt.a.Consequences()...) {
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
	ok, err := confirm(ctx, pr, io.Discard, model.Action{Kind: model.ForceTerminate, TransactionalID: "x"}, "a.log")
	if ok || err != errNotConfirmed {
		t.Errorf("confirm after a signal = %v, %v", ok, err)
	}
}
