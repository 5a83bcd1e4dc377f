package cli

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseOneShot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	with := func(cmd command, f func(*config)) config { c := defaults(cmd); f(&c); return c }
	tests := []struct {
		args []string
		want config
	}{
		{[]string{"list"}, defaults(cmdList)},
		{[]string{"list", "--duration-filter", "60000", "-o", "json"}, with(cmdList, func(c *config) { c.one.durationFilterMs = 60000; c.output = "json" })},
		{[]string{"list", "--duration-filter=-1"}, defaults(cmdList)},
		{[]string{"list", "--transactional-id-pattern", "orders-.*"}, with(cmdList, func(c *config) { c.one.idPattern = "orders-.*" })},
		{[]string{"list", "--state", "ongoing,open", "--state", "CompleteCommit"},
			with(cmdList, func(c *config) { c.one.states = []string{"Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit"} })},
		{[]string{"--bootstrap-server", "k:9092", "describe", "--transactional-id", "orders-0-7"},
			with(cmdDescribe, func(c *config) { c.bootstrap = []string{"k:9092"}; c.one.transactionalID = "orders-0-7" })},
		{[]string{"describe-producers", "--topic", "orders", "--partition", "3"},
			with(cmdDescribeProducers, func(c *config) { c.one.topic, c.one.partition = "orders", 3 })},
		{[]string{"describe-producers", "--topic", "orders", "--partition", "0", "--broker-id", "2"},
			with(cmdDescribeProducers, func(c *config) { c.one.topic, c.one.partition, c.one.brokerID = "orders", 0, 2 })},
		{[]string{"find-hanging", "--broker-id", "1"}, with(cmdFindHanging, func(c *config) { c.one.brokerID = 1 })},
		{[]string{"find-hanging", "--topic", "orders", "--partition", "2", "--max-transaction-timeout", "0"},
			with(cmdFindHanging, func(c *config) {
				c.one.topic, c.one.partition, c.one.maxTxnTimeoutMin, c.one.hasMaxTxnTimeout = "orders", 2, 0, true
			})},
		{[]string{"abort", "--topic", "orders", "--partition", "1", "--start-offset", "40"},
			with(cmdAbort, func(c *config) { c.one.topic, c.one.partition, c.one.startOffset = "orders", 1, 40 })},
		{[]string{"abort", "--topic", "orders", "--partition", "1", "--producer-id", "7", "--producer-epoch", "3", "--coordinator-epoch", "-1", "--yes"},
			with(cmdAbort, func(c *config) {
				c.one.topic, c.one.partition, c.one.producerID, c.one.producerEpoch = "orders", 1, 7, 3
				c.one.coordinatorEpoch, c.one.hasCoordinatorEpoch, c.one.yes = -1, true, true
			})},
		{[]string{"force-terminate", "--transactional-id", "orders-0-7", "--yes", "--audit-log", "/tmp/a.log"},
			with(cmdForceTerminate, func(c *config) { c.one.transactionalID, c.one.yes, c.auditLog = "orders-0-7", true, "/tmp/a.log" })},
		// kafka-transactions.sh's spelling works too.
		{[]string{"forceTerminateTransaction", "--transactionalId", "orders-0-7"},
			with(cmdForceTerminate, func(c *config) { c.one.transactionalID = "orders-0-7" })},
		// Reading commands under --read-only are fine.
		{[]string{"--read-only", "list"}, with(cmdList, func(c *config) { c.readOnly, c.readOnlyGiven = true, true })},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parse(tt.args)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parse =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
}

func TestParseOneShotErrors(t *testing.T) {
	tests := []struct {
		args []string
		msg  string
	}{
		{[]string{"describe"}, "describe needs --transactional-id"},
		{[]string{"describe", "--transactional-id", " "}, "needs --transactional-id"},
		{[]string{"force-terminate", "--yes"}, "force-terminate needs --transactional-id"},
		{[]string{"describe-producers", "--topic", "t"}, "needs --topic and --partition"},
		{[]string{"describe-producers", "--partition", "0"}, "needs --topic and --partition"},
		{[]string{"find-hanging"}, "needs --topic or --broker-id"},
		{[]string{"find-hanging", "--broker-id", "1", "--partition", "0"}, "--partition needs --topic"},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "-1"}, "--max-transaction-timeout must not be negative"},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "1.5"}, `invalid argument "1.5"`},
		{[]string{"abort", "--topic", "t"}, "needs --topic and --partition"},
		{[]string{"abort", "--topic", "t", "--partition", "0"}, "needs --start-offset, or --producer-id"},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--producer-id", "1"}, "missing --producer-epoch"},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--producer-id", "1", "--producer-epoch", "0"}, "missing --coordinator-epoch"},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--producer-epoch", "0", "--coordinator-epoch", "0"}, "missing --producer-id"},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--start-offset", "3", "--producer-id", "1"}, "not both"},
		{[]string{"abort", "--topic", "t", "--partition", "-1", "--start-offset", "3"}, "--partition must not be negative"},
		{[]string{"abort", "--topic", "", "--partition", "0", "--start-offset", "3"}, "--topic is empty"},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--start-offset", "x"}, `invalid argument "x" for "--start-offset"`},
		{[]string{"abort", "--topic", "t", "--partition", "0", "--producer-id", "1", "--producer-epoch", "40000", "--coordinator-epoch", "0"},
			`invalid argument "40000" for "--producer-epoch"`},
		// Flags of another command are refused, never ignored.
		{[]string{"list", "--topic", "t"}, "--topic does not apply to list (it goes with describe-producers, find-hanging, abort)"},
		{[]string{"describe", "--transactional-id", "x", "--yes"}, "--yes does not apply to describe (it goes with abort, force-terminate, commit, resolve)"},
		{[]string{"snapshot", "--duration-filter", "5"}, "--duration-filter does not apply to snapshot (it goes with list)"},
		{[]string{"list", "--state", "Committed"}, `--state "Committed": not a transaction state (open, Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence, Dead)`},
		{[]string{"snapshot", "--state", "open"}, "--state does not apply to snapshot (it goes with list)"},
		{[]string{"--start-offset", "5"}, "--start-offset does not apply to the UI (it goes with abort)"},
		{[]string{"list", "extra"}, `unexpected argument "extra" after list`},
		{[]string{"find_hanging"}, `unknown command "find_hanging"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parse(tt.args)
			if err == nil {
				t.Fatalf("parse accepted %q", tt.args)
			}
			if _, ok := err.(usageError); !ok {
				t.Errorf("error %T is not a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.msg)
			}
		})
	}
}
