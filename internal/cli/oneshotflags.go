package cli

import (
	"strings"

	"github.com/spf13/pflag"
)

// The one-shot commands mirror kafka-transactions.sh: same names, same flags.
const (
	cmdList              command = "list"
	cmdDescribe          command = "describe"
	cmdDescribeProducers command = "describe-producers"
	cmdFindHanging       command = "find-hanging"
	cmdAbort             command = "abort"
	cmdForceTerminate    command = "force-terminate"
)

// commandAliases are kafka-transactions.sh's own spellings.
var commandAliases = map[string]command{"forceTerminateTransaction": cmdForceTerminate}

var oneShotCommands = []command{cmdList, cmdDescribe, cmdDescribeProducers, cmdFindHanging, cmdAbort, cmdForceTerminate}

func isOneShot(c command) bool {
	for _, x := range oneShotCommands {
		if x == c {
			return true
		}
	}
	return false
}

// acts reports whether the command changes the cluster.
func (c command) acts() bool { return c == cmdAbort || c == cmdForceTerminate }

// oneShot holds the one-shot commands' flags. Numbers not given are -1 (none
// of them is meaningful below zero), except the coordinator epoch, which may
// be -1 as DescribeProducers reports it.
type oneShot struct {
	transactionalID string
	topic           string
	partition       int32
	brokerID        int32
	startOffset     int64
	producerID      int64
	producerEpoch   int16
	// coordinatorEpoch is meaningful only with hasCoordinatorEpoch.
	coordinatorEpoch    int32
	hasCoordinatorEpoch bool
	// maxTxnTimeoutMin is find-hanging's --max-transaction-timeout, in
	// minutes; for abort, the idle rule, given only with hasMaxTxnTimeout
	// (else the brokers' transaction.max.timeout.ms), 0 setting it aside.
	maxTxnTimeoutMin int
	hasMaxTxnTimeout bool
	// durationFilterMs is list's --duration-filter: -1 lists all.
	durationFilterMs int64
	idPattern        string
	yes              bool
}

func defaultOneShot() oneShot {
	return oneShot{partition: -1, brokerID: -1, startOffset: -1, producerID: -1, producerEpoch: -1, coordinatorEpoch: -1,
		maxTxnTimeoutMin: 15, durationFilterMs: -1}
}

// oneShotFlags declares the one-shot flags into o.
func oneShotFlags(fs *pflag.FlagSet, o *oneShot) {
	*o = defaultOneShot()
	fs.StringVar(&o.transactionalID, "transactional-id", "", "describe, force-terminate: the transactional id")
	// kafka-transactions.sh forceTerminateTransaction spells it so.
	fs.StringVar(&o.transactionalID, "transactionalId", "", "alias of --transactional-id")
	fs.StringVar(&o.topic, "topic", "", "topic name")
	fs.Int32Var(&o.partition, "partition", -1, "partition number")
	fs.Int32Var(&o.brokerID, "broker-id", -1, "broker id")
	fs.Int64Var(&o.startOffset, "start-offset", -1, "abort: start offset of the transaction to abort")
	fs.Int64Var(&o.producerID, "producer-id", -1, "abort: producer id")
	fs.Int16Var(&o.producerEpoch, "producer-epoch", -1, "abort: producer epoch")
	fs.Int32Var(&o.coordinatorEpoch, "coordinator-epoch", -1, "abort: coordinator epoch")
	fs.IntVar(&o.maxTxnTimeoutMin, "max-transaction-timeout", 15, "find-hanging: maximum transaction timeout in minutes; abort: the producer must be idle longer (default: the brokers' transaction.max.timeout.ms; 0 sets the rule aside)")
	fs.Int64Var(&o.durationFilterMs, "duration-filter", -1, "list: only transactions running longer than this many ms")
	fs.StringVar(&o.idPattern, "transactional-id-pattern", "", "list: regular expression the ids must match")
	fs.BoolVar(&o.yes, "yes", false, "abort, force-terminate: do not ask for confirmation")
}

// validateOneShot checks the one-shot flags with kafka-transactions.sh's
// requirements (which command takes which is the table's: commands.go).
func validateOneShot(fs *pflag.FlagSet, c *config) error {
	o := &c.one
	if !isOneShot(c.cmd) {
		return nil
	}
	given := fs.Changed
	o.hasCoordinatorEpoch = given("coordinator-epoch")
	o.hasMaxTxnTimeout = given("max-transaction-timeout")

	for _, n := range []struct {
		name string
		v    int64
	}{{"partition", int64(o.partition)}, {"broker-id", int64(o.brokerID)}, {"start-offset", o.startOffset},
		{"producer-id", o.producerID}, {"producer-epoch", int64(o.producerEpoch)}, {"max-transaction-timeout", int64(o.maxTxnTimeoutMin)}} {
		if given(n.name) && n.v < 0 {
			return usagef("--%s must not be negative, got %d", n.name, n.v)
		}
	}
	if c.cmd.acts() && c.readOnly {
		return usagef("%s changes the cluster, and --read-only forbids it", c.cmd)
	}

	switch c.cmd {
	case cmdDescribe, cmdForceTerminate:
		if strings.TrimSpace(o.transactionalID) == "" {
			return usagef("%s needs --transactional-id", c.cmd)
		}
	case cmdDescribeProducers:
		if !given("topic") || !given("partition") {
			return usagef("describe-producers needs --topic and --partition")
		}
	case cmdFindHanging:
		if !given("topic") && !given("broker-id") {
			return usagef("find-hanging needs --topic or --broker-id to limit the search")
		}
		if given("partition") && !given("topic") {
			return usagef("--partition needs --topic")
		}
	case cmdAbort:
		if !given("topic") || !given("partition") {
			return usagef("abort needs --topic and --partition")
		}
		byProducer := given("producer-id") || given("producer-epoch") || given("coordinator-epoch")
		switch {
		case given("start-offset") && byProducer:
			return usagef("give either --start-offset or --producer-id, --producer-epoch and --coordinator-epoch, not both")
		case given("start-offset"):
		case !byProducer:
			return usagef("abort needs --start-offset, or --producer-id, --producer-epoch and --coordinator-epoch")
		case !given("producer-id"):
			return usagef("missing --producer-id")
		case !given("producer-epoch"):
			return usagef("missing --producer-epoch")
		case !given("coordinator-epoch"):
			return usagef("missing --coordinator-epoch")
		}
	}
	if topic := o.topic; given("topic") && strings.TrimSpace(topic) == "" {
		return usagef("--topic is empty")
	}
	return nil
}

// oneShotUsage is the help section for the one-shot commands.
const oneShotUsage = `One-shot commands (kafka-transactions.sh's, with its flags, columns and semantics):
  txnscope list [--duration-filter MS] [--transactional-id-pattern REGEX]
  txnscope describe --transactional-id ID
  txnscope describe-producers --topic T --partition P [--broker-id B]
  txnscope find-hanging (--topic T [--partition P] | --broker-id B) [--max-transaction-timeout MIN]
  txnscope abort --topic T --partition P (--start-offset O |
                 --producer-id PID --producer-epoch E --coordinator-epoch CE)
                 [--max-transaction-timeout MIN] [--yes]
  txnscope force-terminate --transactional-id ID [--yes]
                                (also spelled forceTerminateTransaction --transactionalId ID)
      --transactional-id ID        the transactional id (--transactionalId is an alias)
      --topic NAME, --partition N  the partition (find-hanging: --topic alone searches the topic)
      --broker-id N                describe-producers: ask this replica instead of the leader;
                                   find-hanging: search the partitions this broker holds
      --start-offset N             abort: the open transaction starting at this offset
      --producer-id N, --producer-epoch N, --coordinator-epoch N
                                   abort: the transaction by its producer instead
      --max-transaction-timeout MIN
                                   find-hanging: open longer than this is suspect (default 15);
                                   abort: the producer must be idle longer (default: the brokers'
                                   transaction.max.timeout.ms; 0 sends regardless)
      --duration-filter MS         list: only transactions running longer than MS (-1: all)
      --transactional-id-pattern REGEX
                                   list: only ids matching REGEX (Kafka 4.1+ brokers)
      --yes                        abort, force-terminate: send without asking; required when
                                   stdin is not a terminal (on a terminal you type abort)
  -o json prints them as JSON. abort and force-terminate show the transaction's start time,
  re-check the target just before every request, refuse unless it is the very transaction
  shown, and write each request to the audit log before it goes out.
`

// describeOneShot is for error messages naming a command.
func describeOneShot() string {
	names := make([]string, len(oneShotCommands))
	for i, c := range oneShotCommands {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}
