package com.github.txnscope.streamsapp;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * A small Kafka Streams application with {@code processing.guarantee=exactly_once_v2}: it reads
 * the input topic, counts records by key into a persistent state store (so there is a changelog
 * topic, written transactionally like the output) and writes each new count to the output topic.
 * Tests run it to see what real Streams does to a broker's transactions.
 *
 * <p>Every event is one line on stdout (the test reads them instead of sleeping); the library's
 * own logging goes to stderr:
 * <pre>
 *   start APP                            the application is built, about to start
 *   producer CLIENT_ID TRANSACTIONAL_ID  a thread's producer was created (exactly_once_v2: one a thread)
 *   init TRANSACTIONAL_ID                its initTransactions returned (InitProducerId done)
 *   state NEW OLD                        KafkaStreams' state changed (RUNNING, REBALANCING, ...)
 *   thread NAME STATE active=T,.. standby=T,..   a thread's state or tasks changed ("-": none)
 *   committed TRANSACTIONAL_ID N         that producer's Nth commit returned
 *   fenced TRANSACTIONAL_ID EXCEPTION    a commit or abort failed: another producer took the id
 *   aborted TRANSACTIONAL_ID             abortTransaction returned (Streams aborts on task migration)
 *   uncaught THREAD EXCEPTION            a stream thread died; the client shuts down
 *   closed                               close() returned (SIGTERM, stdin EOF with --exit-on-stdin-eof)
 * </pre>
 */
public final class StreamsApp {
    private static final String USAGE = String.join("\n",
            "usage: StreamsApp --bootstrap HOST:PORT --application-id APP --input TOPIC --output TOPIC [options]",
            "  --threads N                 num.stream.threads (default 1)",
            "  --commit-interval-ms N      commit.interval.ms (default 100, Streams' own under exactly_once_v2)",
            "  --state-dir DIR             state.dir (default: Streams' own, under java.io.tmpdir)",
            "  --transaction-timeout-ms N  the producers' transaction.timeout.ms (default: Streams' own, 10000)",
            "  --cache-max-bytes N         statestore.cache.max.bytes (default: Streams' own, 10 MB: counts wait in",
            "                              the cache until the commit, so a transaction is open only while it",
            "                              commits; 0 sends every count at once, and a transaction stays open",
            "                              for most of the commit interval)",
            "  --session-timeout-ms N      the consumers' session.timeout.ms (default 6000: a killed instance's",
            "                              tasks move after this long, not after the client default of 45 s)",
            "  --group-protocol P          group.protocol: classic (default) or streams (KIP-1071, Kafka 4.2+: the",
            "                              group's session timeout is then the broker's, not --session-timeout-ms)",
            "  --exit-on-stdin-eof         halt when stdin closes (the test that started us is gone)");

    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    /** One line at a time, so that lines of different threads never interleave. */
    static synchronized void event(String... fields) {
        OUT.println(String.join(" ", fields));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = parse(args);
        String bootstrap = need(opts, "--bootstrap");
        String app = need(opts, "--application-id");
        String input = need(opts, "--input");
        String output = need(opts, "--output");

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, app);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, opts.getOrDefault("--threads", "1"));
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, opts.getOrDefault("--commit-interval-ms", "100"));
        if (opts.containsKey("--state-dir")) {
            props.put(StreamsConfig.STATE_DIR_CONFIG, opts.get("--state-dir"));
        }
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        if (opts.containsKey("--cache-max-bytes")) {
            props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, opts.get("--cache-max-bytes"));
        }
        String protocol = opts.getOrDefault("--group-protocol", "classic");
        props.put("group.protocol", protocol);
        if (protocol.equals("classic")) {
            // Under the streams protocol the broker owns the session: the consumer refuses these.
            String session = opts.getOrDefault("--session-timeout-ms", "6000");
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), session);
            props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
                    String.valueOf(Math.max(Integer.parseInt(session) / 4, 500)));
        }
        if (opts.containsKey("--transaction-timeout-ms")) {
            props.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG), opts.get("--transaction-timeout-ms"));
        }

        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(input)
                .groupByKey()
                .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts"))
                .toStream()
                .mapValues(String::valueOf)
                .to(output, Produced.with(Serdes.String(), Serdes.String()));

        KafkaStreams streams = new KafkaStreams(builder.build(), props, new EventClientSupplier());
        streams.setStateListener((now, old) -> event("state", now.name(), old.name()));
        streams.setUncaughtExceptionHandler(e -> {
            event("uncaught", Thread.currentThread().getName(), e.getClass().getSimpleName());
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });

        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            stop.countDown();
            streams.close();
            event("closed");
        }, "shutdown"));
        if (opts.containsKey("--exit-on-stdin-eof")) {
            Thread watch = new Thread(() -> {
                try (InputStream in = System.in) {
                    while (in.read() >= 0) {
                        // Anything the test writes is ignored: only the end matters.
                    }
                } catch (IOException ignored) {
                    // The same as EOF: the parent is gone.
                }
                Runtime.getRuntime().halt(2);
            }, "stdin-watch");
            watch.setDaemon(true);
            watch.start();
        }

        event("start", app);
        streams.start();
        watchThreads(streams, stop);
    }

    /**
     * Prints a thread line whenever a thread's state or tasks change: Streams has no public
     * listener for either, and a test must know when the tasks moved.
     */
    private static void watchThreads(KafkaStreams streams, CountDownLatch stop) throws InterruptedException {
        Map<String, String> last = new TreeMap<>();
        while (!stop.await(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
            KafkaStreams.State s = streams.state();
            if (s == KafkaStreams.State.NOT_RUNNING || s == KafkaStreams.State.ERROR) {
                continue;
            }
            Map<String, String> now = new TreeMap<>();
            try {
                for (ThreadMetadata t : streams.metadataForLocalThreads()) {
                    now.put(t.threadName(), t.threadState() + " active=" + tasks(t.activeTasks()) + " standby=" + tasks(t.standbyTasks()));
                }
            } catch (RuntimeException e) {
                continue; // closing, or between states: the next round tells
            }
            for (Map.Entry<String, String> e : now.entrySet()) {
                if (!e.getValue().equals(last.get(e.getKey()))) {
                    event("thread", e.getKey(), e.getValue());
                }
            }
            last = now;
        }
    }

    private static String tasks(java.util.Set<TaskMetadata> ts) {
        TreeSet<String> ids = new TreeSet<>();
        for (TaskMetadata t : ts) {
            ids.add(t.taskId().toString());
        }
        return ids.isEmpty() ? "-" : String.join(",", ids);
    }

    /** The default clients, but every producer reports its transactions' steps. */
    private static final class EventClientSupplier implements KafkaClientSupplier {
        @Override
        public Admin getAdmin(Map<String, Object> config) {
            return Admin.create(config);
        }

        @Override
        public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
            return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        }

        @Override
        public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
            return getConsumer(config);
        }

        @Override
        public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
            return getConsumer(config);
        }

        @Override
        public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
            String txnID = String.valueOf(config.get(ProducerConfig.TRANSACTIONAL_ID_CONFIG));
            event("producer", String.valueOf(config.get(ProducerConfig.CLIENT_ID_CONFIG)), txnID);
            return new EventProducer(config, txnID);
        }
    }

    private static final class EventProducer extends KafkaProducer<byte[], byte[]> {
        private final String txnID;
        private final AtomicLong commits = new AtomicLong();

        EventProducer(Map<String, Object> config, String txnID) {
            super(config, new ByteArraySerializer(), new ByteArraySerializer());
            this.txnID = txnID;
        }

        @Override
        public void initTransactions() {
            super.initTransactions();
            event("init", txnID);
        }

        @Override
        public void commitTransaction() {
            try {
                super.commitTransaction();
            } catch (ProducerFencedException | InvalidProducerEpochException e) {
                event("fenced", txnID, e.getClass().getSimpleName());
                throw e;
            }
            event("committed", txnID, String.valueOf(commits.incrementAndGet()));
        }

        @Override
        public void abortTransaction() {
            try {
                super.abortTransaction();
            } catch (ProducerFencedException | InvalidProducerEpochException e) {
                event("fenced", txnID, e.getClass().getSimpleName());
                throw e;
            }
            event("aborted", txnID);
        }
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> opts = new TreeMap<>();
        List<String> flags = List.of("--exit-on-stdin-eof");
        List<String> valued = new ArrayList<>(List.of("--bootstrap", "--application-id", "--input", "--output", "--threads",
                "--commit-interval-ms", "--state-dir", "--transaction-timeout-ms", "--session-timeout-ms", "--cache-max-bytes",
                "--group-protocol"));
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                OUT.println(USAGE);
                System.exit(0);
            } else if (flags.contains(a)) {
                opts.put(a, "");
            } else if (valued.contains(a) && i + 1 < args.length) {
                opts.put(a, args[++i]);
            } else {
                System.err.println("StreamsApp: unknown or incomplete argument " + a + "\n" + USAGE);
                System.exit(2);
            }
        }
        return opts;
    }

    private static String need(Map<String, String> opts, String key) {
        String v = opts.get(key);
        if (v == null || v.isEmpty()) {
            System.err.println("StreamsApp: " + key + " is required\n" + USAGE);
            System.exit(2);
        }
        return v;
    }
}
