package com.github.txnscope.flinklike;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Behaves like Flink's KafkaSink with DeliveryGuarantee.EXACTLY_ONCE and the INCREMENTING
 * transactional-id strategy, so that tests can watch what such a job does to a real broker.
 *
 * <p>Each subtask owns the ids {@code <prefix>-<subtask>-<checkpoint>}, one transaction per
 * checkpoint: at the checkpoint it flushes, begins the next checkpoint's transaction on a new
 * producer, then commits (or, with --abort-every, aborts) the previous one. On start it first
 * "aborts lingering transactions" the way Flink does after a restore: InitProducerId on the ids
 * from the start checkpoint on until one was never used, which fences a crashed run's producers.
 *
 * <p>Every event is one line on stdout (the test reads them), the client's own logging goes to
 * stderr:
 * <pre>
 *   lingering ID PID EPOCH    an id of an earlier run, now fenced (its open transaction aborted)
 *   begin ID PID EPOCH        a transaction was begun (InitProducerId done)
 *   ready                     every subtask has begun its first transaction
 *   first ID PARTITION OFFSET the transaction's first record is written: its start offset
 *   precommit ID MILLIS       checkpoint barrier: flushed, about to commit or abort
 *   commit ID MILLIS RECORDS  committed
 *   abort ID MILLIS RECORDS   aborted (--abort-every)
 *   fenced ID EXCEPTION       another producer took the id: the job fails (exit status 3)
 *   error ID EXCEPTION MSG    anything else went wrong (exit status 1)
 *   done TRANSACTIONS         the run is over, this many transactions ended (exit status 0)
 * </pre>
 */
public final class FlinkLikeSink {
    private static final String USAGE = String.join("\n",
            "usage: FlinkLikeSink --bootstrap HOST:PORT --topic TOPIC [options]",
            "  --prefix P                  transactional id prefix (default flinklike)",
            "  --parallelism N             subtasks, each writing to partition subtask % partitions (default 1)",
            "  --checkpoint-interval-ms N  time between checkpoints (default 1000)",
            "  --transaction-timeout-ms N  the producers' transaction.timeout.ms (default 60000)",
            "  --records N                 records per checkpoint per subtask, spread over the interval (default 10)",
            "  --abort-every N             abort instead of commit when checkpoint % N == 0 (default 0: never)",
            "  --checkpoints N             stop after N checkpoints (default 0: no limit)",
            "  --duration-ms N             stop at the first checkpoint after N ms (default 0: no limit)",
            "  --start-checkpoint N        first checkpoint number, to resume a crashed run's ids (default 1)",
            "  --no-abort-lingering        do not fence the ids from the start checkpoint on before beginning",
            "  --exit-on-stdin-eof         halt when stdin closes (the test that started us is gone)");

    /** How far the lingering-transaction probe goes at most, per subtask. */
    private static final int MAX_LINGERING_PROBE = 100;

    private final Options opts;
    private final PrintStream out;
    /** Every subtask waits here with its first transaction begun; the last one sets the clock. */
    private final CyclicBarrier begun;
    private final AtomicLong completed = new AtomicLong();
    private volatile long startedAt;

    private FlinkLikeSink(Options opts, PrintStream out) {
        this.opts = opts;
        this.out = out;
        this.begun = new CyclicBarrier(opts.parallelism, () -> {
            startedAt = System.currentTimeMillis();
            event("ready");
        });
    }

    public static void main(String[] args) throws Exception {
        Options opts;
        try {
            opts = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("FlinkLikeSink: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (opts.help) {
            System.out.println(USAGE);
            return;
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (opts.exitOnStdinEof) {
            watchStdin();
        }
        new FlinkLikeSink(opts, out).run();
    }

    private void run() throws InterruptedException {
        List<Thread> subtasks = new ArrayList<>();
        for (int s = 0; s < opts.parallelism; s++) {
            final int subtask = s;
            Thread t = new Thread(() -> {
                try {
                    runSubtask(subtask);
                } catch (Throwable e) {
                    event("error", id(subtask, opts.startCheckpoint), e.getClass().getName(), oneLine(e));
                    Runtime.getRuntime().halt(1);
                }
            }, "subtask-" + s);
            subtasks.add(t);
            t.start();
        }
        for (Thread t : subtasks) {
            t.join();
        }
        event("done", Long.toString(completed.get()));
        System.exit(0);
    }

    private void runSubtask(int subtask) throws InterruptedException, BrokenBarrierException {
        if (opts.abortLingering) {
            abortLingering(subtask);
        }
        long checkpoint = opts.startCheckpoint;
        Txn txn = Txn.begin(this, subtask, checkpoint);
        begun.await();
        long interval = opts.checkpointIntervalMs;
        for (int n = 0; ; n++) {
            long windowStart = startedAt + n * interval;
            for (int r = 0; r < opts.records; r++) {
                sleepUntil(windowStart + r * interval / opts.records);
                txn.send(r);
            }
            sleepUntil(windowStart + interval);
            txn.flush();
            event("precommit", txn.id, Long.toString(System.currentTimeMillis()));
            boolean last = (opts.checkpoints > 0 && n + 1 >= opts.checkpoints)
                    || (opts.durationMs > 0 && System.currentTimeMillis() - startedAt >= opts.durationMs);
            // Flink begins the next checkpoint's transaction at the barrier, and commits the
            // previous one only when the checkpoint completes.
            Txn next = last ? null : Txn.begin(this, subtask, checkpoint + 1);
            boolean abort = opts.abortEvery > 0 && checkpoint % opts.abortEvery == 0;
            txn.end(!abort);
            completed.incrementAndGet();
            if (last) {
                return;
            }
            txn = next;
            checkpoint++;
        }
    }

    /**
     * Flink's TransactionAborter for the INCREMENTING strategy: InitProducerId on each id from the
     * one this run starts with until one has epoch 0 (never used before). A crashed run's open
     * transaction on such an id is aborted by the coordinator, and its producer, should it still be
     * alive, fenced.
     */
    private void abortLingering(int subtask) {
        for (long cp = opts.startCheckpoint; cp < opts.startCheckpoint + MAX_LINGERING_PROBE; cp++) {
            String id = id(subtask, cp);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(producerConfig(id))) {
                p.initTransactions();
                long[] pe = producerIdAndEpoch(p);
                if (pe == null || pe[1] == 0) {
                    return;
                }
                event("lingering", id, Long.toString(pe[0]), Long.toString(pe[1]));
            }
        }
    }

    String id(int subtask, long checkpoint) {
        return opts.prefix + "-" + subtask + "-" + checkpoint;
    }

    Properties producerConfig(String id) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.bootstrap);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, id);
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, Integer.toString(opts.transactionTimeoutMs));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        // Fail within the test's patience instead of the defaults' minutes.
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return p;
    }

    void event(String... fields) {
        out.println(String.join(" ", fields));
    }

    /**
     * A fenced producer fails the whole job, as in Flink, where the task fails and the job restarts
     * from its last checkpoint. The fence may first show as INVALID_PRODUCER_EPOCH on a produce; the
     * abort that follows then reports PRODUCER_FENCED, which is what Flink would log.
     */
    void fail(Txn txn, Throwable e) {
        Throwable fence = find(e, ProducerFencedException.class);
        if (fence == null) {
            try {
                txn.producer.abortTransaction();
            } catch (Throwable e2) {
                fence = find(e2, ProducerFencedException.class);
            }
        }
        if (fence == null) {
            fence = find(e, InvalidProducerEpochException.class);
        }
        if (fence != null) {
            event("fenced", txn.id, fence.getClass().getName());
            Runtime.getRuntime().halt(3);
        }
        event("error", txn.id, e.getClass().getName(), oneLine(e));
        Runtime.getRuntime().halt(1);
    }

    private static Throwable find(Throwable e, Class<? extends Throwable> kind) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (kind.isInstance(c)) {
                return c;
            }
        }
        return null;
    }

    private static String oneLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        return m.replace('\n', ' ').replace('\r', ' ');
    }

    /** The producer's id and epoch, read as Flink reads them (the client does not expose them). */
    private static long[] producerIdAndEpoch(KafkaProducer<?, ?> p) {
        try {
            Field tmField = KafkaProducer.class.getDeclaredField("transactionManager");
            tmField.setAccessible(true);
            Object tm = tmField.get(p);
            Field peField = tm.getClass().getDeclaredField("producerIdAndEpoch");
            peField.setAccessible(true);
            Object pe = peField.get(tm);
            return new long[] {pe.getClass().getField("producerId").getLong(pe), pe.getClass().getField("epoch").getShort(pe)};
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println("FlinkLikeSink: cannot read the producer epoch: " + e);
            return null;
        }
    }

    private static void sleepUntil(long millis) throws InterruptedException {
        long left = millis - System.currentTimeMillis();
        if (left > 0) {
            TimeUnit.MILLISECONDS.sleep(left);
        }
    }

    /** Halts when stdin closes, so a test process that dies leaves no producer behind. */
    private static void watchStdin() {
        Thread t = new Thread(() -> {
            InputStream in = System.in;
            byte[] buf = new byte[256];
            try {
                while (in.read(buf) >= 0) {
                    // discard
                }
            } catch (IOException ignored) {
                // same as EOF
            }
            Runtime.getRuntime().halt(4);
        }, "stdin-watch");
        t.setDaemon(true);
        t.start();
    }

    /** One checkpoint's transaction of one subtask, on its own producer (one id per checkpoint). */
    static final class Txn {
        final FlinkLikeSink sink;
        final String id;
        final KafkaProducer<String, String> producer;
        final int partition;
        final AtomicReference<Throwable> sendError = new AtomicReference<>();
        final AtomicBoolean firstWritten = new AtomicBoolean();
        int sent;

        private Txn(FlinkLikeSink sink, String id, KafkaProducer<String, String> producer, int partition) {
            this.sink = sink;
            this.id = id;
            this.producer = producer;
            this.partition = partition;
        }

        static Txn begin(FlinkLikeSink sink, int subtask, long checkpoint) {
            String id = sink.id(subtask, checkpoint);
            KafkaProducer<String, String> p = new KafkaProducer<>(sink.producerConfig(id));
            int partitions = p.partitionsFor(sink.opts.topic).size();
            p.initTransactions();
            p.beginTransaction();
            long[] pe = producerIdAndEpoch(p);
            sink.event("begin", id, pe == null ? "-1" : Long.toString(pe[0]), pe == null ? "-1" : Long.toString(pe[1]));
            return new Txn(sink, id, p, subtask % partitions);
        }

        void send(int n) {
            check();
            String value = id + "/" + n;
            try {
                producer.send(new ProducerRecord<>(sink.opts.topic, partition, null, value), (md, ex) -> {
                    if (ex != null) {
                        sendError.compareAndSet(null, ex);
                    } else if (firstWritten.compareAndSet(false, true)) {
                        sink.event("first", id, Integer.toString(md.partition()), Long.toString(md.offset()));
                    }
                });
            } catch (RuntimeException e) {
                sink.fail(this, e);
            }
            sent++;
        }

        void flush() {
            try {
                producer.flush();
            } catch (RuntimeException e) {
                sink.fail(this, e);
            }
            check();
        }

        void end(boolean commit) {
            try {
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            } catch (RuntimeException e) {
                sink.fail(this, e);
            }
            sink.event(commit ? "commit" : "abort", id, Long.toString(System.currentTimeMillis()), Integer.toString(sent));
            producer.close(Duration.ofSeconds(5));
        }

        private void check() {
            Throwable e = sendError.get();
            if (e != null) {
                sink.fail(this, e);
            }
        }
    }

    /** Command-line flags: --name value or --name=value. */
    static final class Options {
        String bootstrap;
        String topic;
        String prefix = "flinklike";
        int parallelism = 1;
        long checkpointIntervalMs = 1000;
        int transactionTimeoutMs = 60000;
        int records = 10;
        long abortEvery;
        long checkpoints;
        long durationMs;
        long startCheckpoint = 1;
        boolean abortLingering = true;
        boolean exitOnStdinEof;
        boolean help;

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                String value = null;
                int eq = a.indexOf('=');
                if (a.startsWith("--") && eq > 0) {
                    value = a.substring(eq + 1);
                    a = a.substring(0, eq);
                }
                switch (a) {
                    case "-h", "--help" -> o.help = true;
                    case "--no-abort-lingering" -> o.abortLingering = false;
                    case "--exit-on-stdin-eof" -> o.exitOnStdinEof = true;
                    default -> {
                        if (value == null) {
                            if (i + 1 >= args.length) {
                                throw new IllegalArgumentException(a + " needs a value");
                            }
                            value = args[++i];
                        }
                        o.set(a, value);
                    }
                }
            }
            if (o.help) {
                return o;
            }
            if (o.bootstrap == null || o.bootstrap.isBlank()) {
                throw new IllegalArgumentException("--bootstrap is required");
            }
            if (o.topic == null || o.topic.isBlank()) {
                throw new IllegalArgumentException("--topic is required");
            }
            if (o.parallelism < 1 || o.records < 1 || o.checkpointIntervalMs < 1 || o.transactionTimeoutMs < 1
                    || o.startCheckpoint < 0 || o.abortEvery < 0 || o.checkpoints < 0 || o.durationMs < 0) {
                throw new IllegalArgumentException("counts and durations must be positive");
            }
            return o;
        }

        private void set(String name, String value) {
            try {
                switch (name) {
                    case "--bootstrap" -> bootstrap = value;
                    case "--topic" -> topic = value;
                    case "--prefix" -> prefix = value;
                    case "--parallelism" -> parallelism = Integer.parseInt(value);
                    case "--checkpoint-interval-ms" -> checkpointIntervalMs = Long.parseLong(value);
                    case "--transaction-timeout-ms" -> transactionTimeoutMs = Integer.parseInt(value);
                    case "--records" -> records = Integer.parseInt(value);
                    case "--abort-every" -> abortEvery = Long.parseLong(value);
                    case "--checkpoints" -> checkpoints = Long.parseLong(value);
                    case "--duration-ms" -> durationMs = Long.parseLong(value);
                    case "--start-checkpoint" -> startCheckpoint = Long.parseLong(value);
                    default -> throw new IllegalArgumentException("unknown flag " + name);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + ": not a number: " + value);
            }
        }
    }
}
