package com.github.txnscope.flinkjob;

import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.sink.TransactionNamingStrategy;

/** Flink 2.2 (flink-connector-kafka 5.0): INCREMENTING or POOLING transactional ids. */
final class Naming {
    private Naming() {}

    static void check(String naming) {
        if (!naming.equals("incrementing") && !naming.equals("pooling")) {
            throw new FlinkJob.UsageException("--naming must be incrementing or pooling, not " + naming);
        }
    }

    static <T> void apply(KafkaSinkBuilder<T> sink, String naming) {
        check(naming);
        // Set even for the default (INCREMENTING), so that a connector changing its default cannot
        // change what the tests run.
        sink.setTransactionNamingStrategy(naming.equals("pooling")
                ? TransactionNamingStrategy.POOLING
                : TransactionNamingStrategy.INCREMENTING);
    }
}
