package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

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
	// states is list's --state, as the brokers spell them.
	states []string
	yes    bool
	// unverified: commit on the operator's word, without checkpoint evidence.
	unverified bool
	// job is resolve's --job: the transactional-id prefix of a Flink job.
	job string
}

func defaultOneShot() oneShot {
	return oneShot{partition: -1, brokerID: -1, startOffset: -1, producerID: -1, producerEpoch: -1, coordinatorEpoch: -1,
		maxTxnTimeoutMin: 15, durationFilterMs: -1}
}

// oneShotFlags declares the one-shot flags into o. They mirror
// kafka-transactions.sh's: same names, same meanings.
func oneShotFlags(fs *pflag.FlagSet, o *oneShot) {
	*o = defaultOneShot()
	fs.StringVar(&o.transactionalID, "transactional-id", "", "the transactional `ID`")
	// kafka-transactions.sh forceTerminateTransaction spells it so.
	fs.StringVar(&o.transactionalID, "transactionalId", "", "alias of --transactional-id `ID`")
	fs.StringVar(&o.topic, "topic", "", "the topic `NAME` (find-hanging: alone, it searches the whole topic)")
	fs.Int32Var(&o.partition, "partition", -1, "the partition number `N`")
	fs.Int32Var(&o.brokerID, "broker-id", -1, "describe-producers: ask broker `N` instead of the leader; find-hanging: search the partitions broker N holds")
	fs.Int64Var(&o.startOffset, "start-offset", -1, "abort: the open transaction starting at offset `N`")
	fs.Int64Var(&o.producerID, "producer-id", -1, "abort: the transaction by its producer instead: producer id `N`, with --producer-epoch and --coordinator-epoch")
	fs.Int16Var(&o.producerEpoch, "producer-epoch", -1, "abort: the producer's epoch `N`")
	fs.Int32Var(&o.coordinatorEpoch, "coordinator-epoch", -1, "abort: the coordinator epoch `N` of the producer's transaction")
	fs.IntVar(&o.maxTxnTimeoutMin, "max-transaction-timeout", o.maxTxnTimeoutMin, fmt.Sprintf("find-hanging: open longer than `MIN` minutes is suspect (default %d); "+
		"abort: the producer must be idle longer (default: the brokers' transaction.max.timeout.ms; 0 sends regardless)", o.maxTxnTimeoutMin))
	fs.Int64Var(&o.durationFilterMs, "duration-filter", -1, "list: only transactions running longer than `MS` milliseconds (-1: all)")
	fs.StringVar(&o.idPattern, "transactional-id-pattern", "", "list: only ids matching the regular expression `REGEX` (Kafka 4.1+ brokers)")
	fs.StringSliceVar(&o.states, "state", nil, "list: only transactions in these `STATE`s, comma-separated, as Kafka names them (Ongoing, CompleteCommit, ...; open: the three open ones); the brokers filter")
	fs.BoolVar(&o.yes, "yes", false, "abort, force-terminate, commit, resolve: send without asking; required when stdin is not a terminal (on a terminal you type the command's word)")
	fs.BoolVar(&o.unverified, "unverified", false, "commit: send even though txnscope cannot show that the transaction's Flink checkpoint completed (you know it did)")
	fs.StringVar(&o.job, "job", "", "resolve: the Flink job whose KafkaSink uses transactional-id `PREFIX`")
}

// checkCommand checks the flags the command takes with
// kafka-transactions.sh's requirements; the command's own are its check's.
func checkCommand(fs *pflag.FlagSet, c *config) error {
	o := &c.one
	s := specOf(*c)
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
	if s.check != nil {
		if err := s.check(c, given); err != nil {
			return err
		}
	}
	if topic := o.topic; given("topic") && strings.TrimSpace(topic) == "" {
		return usagef("--topic is empty")
	}
	return nil
}
