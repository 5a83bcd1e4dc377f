package cli

// abort is kafka-transactions.sh abort: one open transaction on one
// partition, by its start offset or by its producer (action.go runs it).
const cmdAbort command = "abort"

func checkAbort(_ *config, given func(string) bool) error {
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
	return nil
}
