package ui

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's test run when any goroutine outlives the
// tests: a refresh or abort command, a poll or clock timer, a program, a kfake
// cluster or a Kafka client left running after the model quit or the admin
// was closed.
//
// The one goroutine ignored is teatest's: NewTestModel starts a goroutine
// that waits for SIGINT to kill the program and never stops it once the
// program has ended (signal.Notify without signal.Stop). It belongs to the
// test library, holds nothing of ours, and ends with the test binary.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
	)
}
