package com.github.txnscope.flinkjob;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A real Apache Flink job for txnscope's tests: a generated source feeding a KafkaSink with
 * DeliveryGuarantee.EXACTLY_ONCE, run in a MiniCluster inside this JVM, so that tests see what real
 * Flink does to a real broker's transactions (integration/realflink_test.go).
 *
 * <p>This class only reads the arguments and points log4j at its configuration: no Flink class may
 * be loaded before that, or Flink's static loggers would bind to log4j's default (stderr) setup.
 * {@link Runner} does the rest.
 */
public final class FlinkJob {
    static final String USAGE = String.join("\n",
            "usage: scripts/flinkjob --flink 1.20|2.2 --bootstrap HOST:PORT --topic TOPIC [options]",
            "",
            "Runs one MiniCluster (one JobManager, one TaskManager) with one or more jobs: a generated",
            "source -> [a map that can sleep in snapshotState] -> KafkaSink EXACTLY_ONCE.",
            "",
            "Job options (the defaults of every job; --job overrides them per job):",
            "  --prefix P                   transactional id prefix (default flinkjob)",
            "  --topic T                    topic the sink writes to (required)",
            "  --parallelism N              parallelism of every operator (default 3)",
            "  --checkpoint-interval-ms N   checkpoint interval (default 3000)",
            "  --checkpoint-timeout-ms N    a checkpoint slower than this fails (default 600000)",
            "  --transaction-timeout-ms N   the producers' transaction.timeout.ms (default 60000)",
            "  --naming incrementing|pooling  TransactionNamingStrategy (pooling: Flink 2.2 only)",
            "  --checkpoint-dir DIR         where retained checkpoints go: DIR/<job id>/chk-N (a path, or",
            "                               s3://BUCKET/PATH with --s3-endpoint)",
            "                               (RETAIN_ON_CANCELLATION; default: none, no restore possible)",
            "  --restore PATH|latest        start from a retained checkpoint (a chk-N dir or its _metadata);",
            "                               latest: the newest chk-N with a _metadata under --checkpoint-dir",
            "  --records-per-second N       the source's total rate, shared by its subtasks (default 300)",
            "  --checkpoint-sleep-ms N      a map operator sleeps this long in every snapshotState, so",
            "                               each checkpoint (and the open transaction) lasts that much longer",
            "  --restart-attempts N         fixed-delay restart strategy attempts (default 2147483647)",
            "  --restart-delay-ms N         its delay (default 1000)",
            "",
            "Cluster options:",
            "  --bootstrap HOST:PORT        the Kafka cluster (required)",
            "  --job K=V,K=V...             one more job; keys are the job options' names without --",
            "                               (prefix=a,parallelism=2,naming=pooling,restore=latest,...).",
            "                               Without --job: one job of the defaults",
            "  --jobs N                     N jobs of the defaults (two jobs on one prefix: --jobs 2; Flink 2.2",
            "                               refuses one prefix twice in one TaskManager, and a fence there",
            "                               fails the TaskManager and so every job of this JVM)",
            "  --rest-port N                Flink's REST API port (default 0: any free port, printed)",
            "  --archive-dir DIR            archive every job that ends for good there, for a History Server",
            "                               (jobmanager.archive.fs.dir)",
            "  --history-server DIR         run Flink's History Server instead, on the archives in DIR, its",
            "                               REST API on --rest-port (required): no cluster, no --bootstrap",
            "  --s3-endpoint URL            an S3-compatible store for s3:// checkpoints (path-style;",
            "                               keys from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
            "  --log-file PATH              Flink's and Kafka's log (INFO) goes there (or $FLINKJOB_LOG);",
            "                               default: warnings on stderr",
            "  --exit-on-stdin-eof          halt (as kill -9 would) when stdin closes",
            "",
            "One line per event on stdout, JOB being the job's prefix, or PREFIX#K for the K-th (from 2)",
            "job on a prefix another job already uses:",
            "  flink VERSION rest=PORT                     the cluster is up",
            "  historyserver rest=PORT                     the History Server is up",
            "  restore JOB PATH                            the job will start from this checkpoint",
            "  started JOB JOBID rest=PORT                 the job was submitted",
            "  status JOB STATE                            the job's state changed (RUNNING, RESTARTING, ...)",
            "  failure JOB EXCEPTION ROOT-CAUSE            a new entry in the job's exception history",
            "  checkpoint JOB ID completed PATH            a checkpoint completed (PATH: its retained dir or -)",
            "  checkpoint-failed JOB COUNT                 the count of failed checkpoints went up",
            "  restored JOB ID                             the job (re)started from checkpoint ID",
            "  taskmanager restarted                       the TaskManager died (Flink 2.2 on a fence):",
            "                                              a new one was started, as a deployment would",
            "  stopping                                    SIGTERM: the MiniCluster is being closed",
            "  stopped                                     the MiniCluster is closed (then the JVM exits)");

    private FlinkJob() {}

    /** One job's settings. */
    static final class JobSpec {
        String prefix = "flinkjob";
        String topic;
        int parallelism = 3;
        long checkpointIntervalMs = 3000;
        long checkpointTimeoutMs = 600_000;
        long transactionTimeoutMs = 60_000;
        String naming = "incrementing";
        String checkpointDir;
        String restore;
        long recordsPerSecond = 300;
        long checkpointSleepMs;
        int restartAttempts = Integer.MAX_VALUE;
        long restartDelayMs = 1000;
        /** The name in the event lines; set once every job is known. */
        String name;

        JobSpec copy() {
            JobSpec c = new JobSpec();
            c.prefix = prefix;
            c.topic = topic;
            c.parallelism = parallelism;
            c.checkpointIntervalMs = checkpointIntervalMs;
            c.checkpointTimeoutMs = checkpointTimeoutMs;
            c.transactionTimeoutMs = transactionTimeoutMs;
            c.naming = naming;
            c.checkpointDir = checkpointDir;
            c.restore = restore;
            c.recordsPerSecond = recordsPerSecond;
            c.checkpointSleepMs = checkpointSleepMs;
            c.restartAttempts = restartAttempts;
            c.restartDelayMs = restartDelayMs;
            return c;
        }

        /** Sets one job option; false when key is not one. */
        boolean set(String key, String v) {
            switch (key) {
                case "prefix": prefix = v; break;
                case "topic": topic = v; break;
                case "parallelism": parallelism = positiveInt(key, v); break;
                case "checkpoint-interval-ms": checkpointIntervalMs = positiveLong(key, v); break;
                case "checkpoint-timeout-ms": checkpointTimeoutMs = positiveLong(key, v); break;
                case "transaction-timeout-ms": transactionTimeoutMs = positiveLong(key, v); break;
                case "naming":
                    if (!v.equals("incrementing") && !v.equals("pooling")) {
                        throw new UsageException("--naming must be incrementing or pooling, not " + v);
                    }
                    naming = v;
                    break;
                case "checkpoint-dir": checkpointDir = v; break;
                case "restore": restore = v; break;
                case "records-per-second": recordsPerSecond = positiveLong(key, v); break;
                case "checkpoint-sleep-ms": checkpointSleepMs = Long.parseLong(v); break;
                case "restart-attempts": restartAttempts = Integer.parseInt(v); break;
                case "restart-delay-ms": restartDelayMs = Long.parseLong(v); break;
                default: return false;
            }
            return true;
        }
    }

    /** Everything the arguments say. */
    static final class Options {
        String bootstrap;
        int restPort;
        String logFile = System.getenv("FLINKJOB_LOG");
        String s3Endpoint;
        String archiveDir;
        String historyServer;
        boolean exitOnStdinEof;
        final List<JobSpec> jobs = new ArrayList<>();
    }

    static final class UsageException extends RuntimeException {
        UsageException(String msg) {
            super(msg);
        }
    }

    static int positiveInt(String key, String v) {
        int n = Integer.parseInt(v);
        if (n <= 0) {
            throw new UsageException("--" + key + " must be positive");
        }
        return n;
    }

    static long positiveLong(String key, String v) {
        long n = Long.parseLong(v);
        if (n <= 0) {
            throw new UsageException("--" + key + " must be positive");
        }
        return n;
    }

    static Options parse(String[] args) {
        Options o = new Options();
        JobSpec defaults = new JobSpec();
        List<String> specs = new ArrayList<>();
        int copies = 0;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--exit-on-stdin-eof")) {
                o.exitOnStdinEof = true;
                continue;
            }
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument " + a);
            }
            String key = a.substring(2);
            String v;
            int eq = key.indexOf('=');
            if (eq >= 0) {
                v = key.substring(eq + 1);
                key = key.substring(0, eq);
            } else {
                if (i + 1 >= args.length) {
                    throw new UsageException(a + " needs a value");
                }
                v = args[++i];
            }
            try {
                switch (key) {
                    case "bootstrap": o.bootstrap = v; break;
                    case "rest-port": o.restPort = Integer.parseInt(v); break;
                    case "log-file": o.logFile = v; break;
                    case "s3-endpoint": o.s3Endpoint = v; break;
                    case "archive-dir": o.archiveDir = v; break;
                    case "history-server": o.historyServer = v; break;
                    case "job": specs.add(v); break;
                    case "jobs": copies = positiveInt(key, v); break;
                    default:
                        if (!defaults.set(key, v)) {
                            throw new UsageException("unknown option --" + key);
                        }
                }
            } catch (NumberFormatException e) {
                throw new UsageException("--" + key + ": not a number: " + v);
            }
        }
        for (String spec : specs) {
            JobSpec j = defaults.copy();
            for (String kv : spec.split(",")) {
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    throw new UsageException("--job " + spec + ": " + kv + " is not KEY=VALUE");
                }
                String key = kv.substring(0, eq);
                try {
                    if (!j.set(key, kv.substring(eq + 1))) {
                        throw new UsageException("--job " + spec + ": unknown key " + key);
                    }
                } catch (NumberFormatException e) {
                    throw new UsageException("--job " + spec + ": " + key + " is not a number");
                }
            }
            o.jobs.add(j);
        }
        if (specs.isEmpty()) {
            for (int k = 0; k < Math.max(1, copies); k++) {
                o.jobs.add(defaults.copy());
            }
        } else if (copies > 0) {
            throw new UsageException("--jobs and --job exclude each other");
        }
        if (o.historyServer != null) {
            if (o.restPort <= 0) {
                throw new UsageException("--history-server needs --rest-port");
            }
            return o;
        }
        if (o.bootstrap == null) {
            throw new UsageException("--bootstrap is required");
        }
        Map<String, Integer> seen = new LinkedHashMap<>();
        for (JobSpec j : o.jobs) {
            if (j.topic == null) {
                throw new UsageException("--topic is required");
            }
            if (j.restore != null && j.restore.equals("latest") && j.checkpointDir == null) {
                throw new UsageException("--restore latest needs --checkpoint-dir");
            }
            int k = seen.merge(j.prefix, 1, Integer::sum);
            j.name = k == 1 ? j.prefix : j.prefix + "#" + k;
        }
        return o;
    }

    /** Writes the log4j2 configuration for this run and tells log4j to use it. */
    static void configureLogging(String logFile) throws IOException {
        String conf;
        if (logFile != null && !logFile.isEmpty()) {
            // Flink's connector logs "Aborting lingering transactions" and its fences at INFO; the
            // Kafka client's per-producer config dumps would drown them (INCREMENTING makes a
            // producer per subtask per checkpoint).
            conf = String.join("\n",
                    "status = error",
                    "appender.file.type = File",
                    "appender.file.name = FILE",
                    "appender.file.fileName = " + escapeProperty(logFile),
                    "appender.file.append = true",
                    "appender.file.layout.type = PatternLayout",
                    "appender.file.layout.pattern = %d{yyyy-MM-dd'T'HH:mm:ss.SSS} %-5p [%t] %c - %m%n",
                    "rootLogger.level = INFO",
                    "rootLogger.appenderRef.file.ref = FILE",
                    "logger.pc.name = org.apache.kafka.clients.producer.ProducerConfig",
                    "logger.pc.level = WARN",
                    "logger.ac.name = org.apache.kafka.clients.admin.AdminClientConfig",
                    "logger.ac.level = WARN",
                    "logger.cc.name = org.apache.kafka.clients.consumer.ConsumerConfig",
                    "logger.cc.level = WARN",
                    "logger.ai.name = org.apache.kafka.common.utils.AppInfoParser",
                    "logger.ai.level = WARN",
                    "logger.md.name = org.apache.kafka.clients.Metadata",
                    "logger.md.level = WARN",
                    "");
        } else {
            conf = String.join("\n",
                    "status = error",
                    "appender.err.type = Console",
                    "appender.err.name = STDERR",
                    "appender.err.target = SYSTEM_ERR",
                    "appender.err.layout.type = PatternLayout",
                    "appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5p %c{1} - %m%n",
                    "rootLogger.level = WARN",
                    "rootLogger.appenderRef.err.ref = STDERR",
                    "");
        }
        Path f = Files.createTempFile("flinkjob-log4j2-", ".properties");
        Files.writeString(f, conf, StandardCharsets.UTF_8);
        f.toFile().deleteOnExit();
        System.setProperty("log4j2.configurationFile", f.toString());
        // Flink passes more arguments than placeholders in a few messages: log4j's status logger
        // would print a warning on stderr for each.
        System.setProperty("log4j2.statusLoggerLevel", "ERROR");
        // The SIGTERM hook closes the MiniCluster and Flink logs while it does: log4j must not shut
        // itself down first.
        System.setProperty("log4j2.shutdownHookEnabled", "false");
    }

    private static String escapeProperty(String v) {
        return v.replace("\\", "\\\\");
    }

    /** Halts the JVM when stdin closes: the test that started us is gone and nobody would stop us. */
    static void haltOnStdinEof() {
        Thread t = new Thread(() -> {
            InputStream in = System.in;
            byte[] buf = new byte[256];
            try {
                while (in.read(buf) >= 0) {
                    // discard
                }
            } catch (IOException ignored) {
                // treated as EOF
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-eof");
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) throws Exception {
        for (String a : args) {
            if (a.equals("-h") || a.equals("--help")) {
                System.out.println(USAGE);
                return;
            }
        }
        Options o;
        try {
            o = parse(args);
        } catch (UsageException e) {
            System.err.println("flinkjob: " + e.getMessage() + " (see --help)");
            System.exit(2);
            return;
        }
        configureLogging(o.logFile);
        if (o.exitOnStdinEof) {
            haltOnStdinEof();
        }
        try {
            if (o.historyServer != null) {
                Runner.historyServer(o);
                return;
            }
            Runner.run(o);
        } catch (UsageException e) {
            System.err.println("flinkjob: " + e.getMessage());
            System.exit(2);
        } catch (Throwable e) {
            // Flink's threads are not daemons: without an exit a cluster that failed to start would
            // leave the JVM running.
            e.printStackTrace();
            System.exit(1);
        }
    }
}
