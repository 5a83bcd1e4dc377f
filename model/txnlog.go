package model

// TxnLogRecord is one record of a transaction coordinator's own log
// (`__transaction_state`): the state of one transactional id as the
// coordinator wrote it. A compacted partition keeps the latest per id; the
// part not yet compacted keeps every transition, with the coordinator's
// timestamps.
type TxnLogRecord struct {
	ID string
	// Tombstone: the id expired (transactional.id.expiration.ms); only ID,
	// Partition and Offset are set.
	Tombstone     bool
	ProducerID    int64
	ProducerEpoch int16
	TimeoutMs     int32
	State         State
	Partitions    []TopicPartition
	// StartMs is when the transaction began (-1: none); LastUpdateMs when
	// the coordinator wrote this state (Unix milliseconds).
	StartMs, LastUpdateMs int64
	// PrevProducerID and NextProducerID are set when the producer id moved
	// on (an exhausted epoch); -1 otherwise.
	PrevProducerID, NextProducerID int64
	// NextProducerEpoch goes with NextProducerID (Kafka 4.1+, two-phase
	// commit); -1 otherwise.
	NextProducerEpoch int16
	// ClientTxnVersion is the client's transaction version (2: every end
	// bumps the epoch; 0 when the record does not say).
	ClientTxnVersion int16
	// Partition and Offset are where the record sits in the log.
	Partition int32
	Offset    int64
	// Unread, when set, says the record could not be read, and Why says
	// how: then only Partition, Offset, LastUpdateMs (the record's own
	// timestamp) and ID are set, ID only when the key could be read (""
	// otherwise: Kafka refuses an empty transactional id).
	Unread UnreadKind
	Why    string
}
