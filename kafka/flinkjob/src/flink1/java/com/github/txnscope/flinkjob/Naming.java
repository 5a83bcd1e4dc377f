package com.github.txnscope.flinkjob;

import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;

/** Flink 1.20 (flink-connector-kafka 3.4): the transactional ids are always INCREMENTING. */
final class Naming {
    private Naming() {}

    static void check(String naming) {
        if (!naming.equals("incrementing")) {
            throw new FlinkJob.UsageException("--naming " + naming + " needs Flink 2.2: flink-connector-kafka "
                    + "3.4.0-1.20 names transactions only <prefix>-<subtask>-<checkpoint> (INCREMENTING); "
                    + "TransactionNamingStrategy came with connector 4.0");
        }
    }

    static <T> void apply(KafkaSinkBuilder<T> sink, String naming) {
        check(naming);
    }
}
