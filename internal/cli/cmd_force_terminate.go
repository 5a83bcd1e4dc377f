package cli

// force-terminate is Kafka 4.1's kafka-transactions.sh
// forceTerminateTransaction: the ongoing transaction of one transactional id
// (action.go runs it; its check, checkTransactionalID, is describe's).
const cmdForceTerminate command = "force-terminate"
