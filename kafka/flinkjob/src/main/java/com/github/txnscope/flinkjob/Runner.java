package com.github.txnscope.flinkjob;

import com.github.txnscope.flinkjob.FlinkJob.JobSpec;
import com.github.txnscope.flinkjob.FlinkJob.Options;
import com.github.txnscope.flinkjob.FlinkJob.UsageException;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.webmonitor.history.HistoryServer;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;

/** Starts the MiniCluster, submits the jobs and reports what happens to them on stdout. */
final class Runner {
    private static final PrintStream OUT = System.out;
    private static volatile boolean stopping;

    private Runner() {}

    static synchronized void event(String line) {
        OUT.println(line);
        OUT.flush();
    }

    static void run(Options o) throws Exception {
        int slots = 0;
        for (JobSpec j : o.jobs) {
            Naming.check(j.naming);
            slots += j.parallelism;
            if (j.restore != null) {
                j.restore = resolveRestore(j);
            }
        }

        Map<String, String> cluster = new HashMap<>();
        cluster.put("rest.address", "127.0.0.1");
        cluster.put("rest.bind-address", "127.0.0.1");
        cluster.put("rest.port", Integer.toString(o.restPort));
        cluster.put("rest.bind-port", Integer.toString(o.restPort));
        cluster.put("jobmanager.bind-host", "127.0.0.1");
        cluster.put("taskmanager.bind-host", "127.0.0.1");
        cluster.put("taskmanager.host", "127.0.0.1");
        cluster.put("taskmanager.numberOfTaskSlots", Integer.toString(slots));
        // The REST handlers cache a job's graph and checkpoint statistics for this long (3 s by
        // default): the event lines would come seconds late and skip checkpoints.
        cluster.put("web.refresh-interval", "100");
        cluster.put("rest.cache.checkpoint-statistics.timeout", "100 ms");
        if (o.s3Endpoint != null) {
            cluster.put("s3.endpoint", o.s3Endpoint);
            cluster.put("s3.path.style.access", "true");
            cluster.put("s3.access-key", System.getenv("AWS_ACCESS_KEY_ID"));
            cluster.put("s3.secret-key", System.getenv("AWS_SECRET_ACCESS_KEY"));
            cluster.put("fs.s3a.connection.ssl.enabled", "false");
        }
        if (o.archiveDir != null) {
            cluster.put("jobmanager.archive.fs.dir", Paths.get(o.archiveDir).toAbsolutePath().toUri().toString());
        }
        // The file systems (s3:// above all) take their settings from here, as a cluster's do from
        // its configuration file.
        FileSystem.initialize(Configuration.fromMap(cluster), null);
        MiniClusterConfiguration mcc = new MiniClusterConfiguration.Builder()
                .setConfiguration(Configuration.fromMap(cluster))
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(slots)
                .build();
        MiniCluster mc = new MiniCluster(mcc);
        mc.start();
        URI rest = mc.getRestAddress().get(60, TimeUnit.SECONDS);
        event("flink " + EnvironmentInformation.getVersion() + " rest=" + rest.getPort());

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // SIGTERM (or the last job ended): close the cluster the way a TaskManager and
            // JobManager being stopped do, and say when it is done.
            stopping = true;
            event("stopping");
            try {
                mc.closeAsync().get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("flinkjob: closing the MiniCluster: " + e);
            }
            event("stopped");
        }, "flinkjob-stop"));

        List<Thread> watchers = new ArrayList<>();
        List<Watcher> ws = new ArrayList<>();
        for (JobSpec j : o.jobs) {
            JobGraph jg = jobGraph(o, j);
            JobID id = mc.submitJob(jg).get(60, TimeUnit.SECONDS).getJobID();
            event("started " + j.name + " " + id + " rest=" + rest.getPort());
            Watcher w = new Watcher(j, id, rest);
            ws.add(w);
            Thread t = new Thread(w, "watch-" + j.name);
            t.setDaemon(true);
            t.start();
            watchers.add(t);
        }
        Thread sup = new Thread(() -> superviseTaskManager(mc, rest), "taskmanager-supervisor");
        sup.setDaemon(true);
        sup.start();
        for (Thread t : watchers) {
            t.join();
        }
        // Every job reached a terminal state (it failed for good or was cancelled).
        boolean failed = ws.stream().anyMatch(w -> !"FINISHED".equals(w.state) && !"CANCELED".equals(w.state));
        System.exit(failed ? 1 : 0);
    }

    /** Runs Flink's History Server on the archives in o.historyServer until the JVM is stopped. */
    static void historyServer(Options o) throws Exception {
        Map<String, String> c = new HashMap<>();
        c.put("historyserver.archive.fs.dir", Paths.get(o.historyServer).toAbsolutePath().toUri().toString());
        c.put("historyserver.archive.fs.refresh-interval", "500 ms");
        c.put("historyserver.web.address", "127.0.0.1");
        c.put("historyserver.web.port", Integer.toString(o.restPort));
        c.put("historyserver.web.tmpdir", Files.createTempDirectory("flinkjob-historyserver").toString());
        Configuration conf = Configuration.fromMap(c);
        FileSystem.initialize(conf, null);
        HistoryServer hs = new HistoryServer(conf);
        Thread t = new Thread(hs::run, "historyserver");
        t.start();
        event("historyserver rest=" + o.restPort);
        t.join();
    }

    /**
     * Starts a new TaskManager when the cluster has none left. Flink 2.2 treats an exception while
     * closing a fenced KafkaSink writer as fatal for the whole TaskManager ("TaskManager #0
     * failed"); in a real deployment its process exits and is started again (Kubernetes, YARN),
     * but a MiniCluster never replaces it, and the jobs would wait for slots forever.
     */
    static void superviseTaskManager(MiniCluster mc, URI rest) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpRequest req = HttpRequest.newBuilder(rest.resolve("/taskmanagers")).timeout(Duration.ofSeconds(10)).GET().build();
        while (!stopping) {
            try {
                Thread.sleep(500);
                String body = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
                if (body.contains("\"taskmanagers\":[]") && !stopping) {
                    event("taskmanager restarted");
                    mc.startTaskManager();
                    Thread.sleep(5000);
                }
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                if (!stopping) {
                    System.err.println("flinkjob: watching the TaskManager: " + e);
                }
            }
        }
    }

    /** The chk-N directory --restore names: itself, its _metadata's dir, or the newest one (latest). */
    static String resolveRestore(JobSpec j) throws IOException {
        if (j.restore.contains("://") && !j.restore.startsWith("file:")) {
            // An object store: Flink reads it itself.
            String p = j.restore.replaceFirst("/_metadata$", "");
            event("restore " + j.name + " " + p);
            return p;
        }
        if (!j.restore.equals("latest")) {
            Path p = Paths.get(j.restore.replaceFirst("^file:", ""));
            if (p.getFileName().toString().equals("_metadata")) {
                p = p.getParent();
            }
            if (!Files.isRegularFile(p.resolve("_metadata"))) {
                throw new UsageException("--restore " + j.restore + ": no _metadata there");
            }
            event("restore " + j.name + " " + p);
            return p.toString();
        }
        Pattern chk = Pattern.compile("chk-\\d+");
        Optional<Path> newest;
        try (Stream<Path> s = Files.walk(Paths.get(j.checkpointDir), 3)) {
            newest = s.filter(p -> p.getFileName().toString().equals("_metadata")
                            && chk.matcher(p.getParent().getFileName().toString()).matches())
                    .max(Comparator.comparingLong(p -> {
                        try {
                            return Files.getLastModifiedTime(p).toMillis();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }));
        }
        if (newest.isEmpty()) {
            throw new UsageException("--restore latest: no chk-N/_metadata under " + j.checkpointDir);
        }
        Path p = newest.get().getParent();
        event("restore " + j.name + " " + p);
        return p.toString();
    }

    static JobGraph jobGraph(Options o, JobSpec j) {
        Map<String, String> conf = new HashMap<>();
        conf.put("execution.checkpointing.interval", j.checkpointIntervalMs + " ms");
        conf.put("execution.checkpointing.mode", "EXACTLY_ONCE");
        conf.put("execution.checkpointing.timeout", j.checkpointTimeoutMs + " ms");
        conf.put("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
        if (j.checkpointDir != null) {
            String dir = j.checkpointDir.contains("://") ? j.checkpointDir : Paths.get(j.checkpointDir).toAbsolutePath().toUri().toString();
            conf.put("execution.checkpointing.storage", "filesystem");
            conf.put("execution.checkpointing.dir", dir);
        }
        conf.put("restart-strategy.type", "fixed-delay");
        conf.put("restart-strategy.fixed-delay.attempts", Integer.toString(j.restartAttempts));
        conf.put("restart-strategy.fixed-delay.delay", j.restartDelayMs + " ms");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(Configuration.fromMap(conf));
        env.setParallelism(j.parallelism);

        String name = j.name;
        GeneratorFunction<Long, String> gen = i -> name + " " + i;
        DataGeneratorSource<String> source = new DataGeneratorSource<>(
                gen, Long.MAX_VALUE, RateLimiterStrategy.perSecond(j.recordsPerSecond), Types.STRING);
        // The map is always there, sleeping or not, so that a run with --checkpoint-sleep-ms and one
        // without have the same operators and restore each other's checkpoints.
        DataStream<String> records = env.fromSource(source, WatermarkStrategy.noWatermarks(), "generator")
                .uid("generator")
                .map(new SlowSnapshot(j.checkpointSleepMs))
                .uid("slow-snapshot")
                .name("slow-snapshot");

        KafkaSinkBuilder<String> sink = KafkaSink.<String>builder()
                .setBootstrapServers(o.bootstrap)
                .setRecordSerializer(KafkaRecordSerializationSchema.builder()
                        .setTopic(j.topic)
                        .setValueSerializationSchema(new SimpleStringSchema())
                        .build())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(j.prefix)
                .setProperty("transaction.timeout.ms", Long.toString(j.transactionTimeoutMs));
        Naming.apply(sink, j.naming);
        records.sinkTo(sink.build()).uid("kafka-sink").name("kafka-sink");

        StreamGraph sg = env.getStreamGraph();
        sg.setJobName("flinkjob " + j.name);
        if (j.restore != null) {
            sg.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(j.restore, false));
        }
        return sg.getJobGraph();
    }

    /** Passes records on; sleeps in every snapshotState to make checkpoints as slow as asked. */
    static final class SlowSnapshot implements MapFunction<String, String>, CheckpointedFunction {
        private static final long serialVersionUID = 1L;
        private final long sleepMs;

        SlowSnapshot(long sleepMs) {
            this.sleepMs = sleepMs;
        }

        @Override
        public String map(String value) {
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) throws Exception {
            if (sleepMs > 0) {
                Thread.sleep(sleepMs);
            }
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {}
    }

    /** Polls Flink's REST API for one job and prints its events. */
    static final class Watcher implements Runnable {
        private static final Pattern STATE = Pattern.compile("\"state\":\"([A-Z_]+)\"");
        private static final Pattern ID = Pattern.compile("\"id\":(\\d+)");
        private static final Pattern PATH = Pattern.compile("\"external_path\":\"([^\"]*)\"");
        private static final Pattern STATUS = Pattern.compile("\"status\":\"([A-Z_]+)\"");
        private static final Pattern FAILED = Pattern.compile("\"failed\":(\\d+)");
        private static final Pattern EXC = Pattern.compile("\"exceptionName\":\"([^\"]*)\"");
        private static final Pattern TS = Pattern.compile("\"timestamp\":(\\d+)");
        private static final Pattern CAUSE = Pattern.compile("Caused by: ([A-Za-z0-9_.$]+)");

        private final JobSpec spec;
        private final JobID id;
        private final URI rest;
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        volatile String state = "";
        private long lastCompleted = -1;
        private long lastRestored = -1;
        private long failedCount;
        private long lastFailureTs;

        Watcher(JobSpec spec, JobID id, URI rest) {
            this.spec = spec;
            this.id = id;
            this.rest = rest;
        }

        private String get(String path) throws IOException, InterruptedException {
            HttpRequest req = HttpRequest.newBuilder(rest.resolve(path)).timeout(Duration.ofSeconds(10)).GET().build();
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
            if (r.statusCode() != 200) {
                throw new IOException(path + ": HTTP " + r.statusCode());
            }
            return r.body();
        }

        @Override
        public void run() {
            int polls = 0;
            while (!stopping) {
                try {
                    String job = get("/jobs/" + id);
                    Matcher m = STATE.matcher(job);
                    String s = m.find() ? m.group(1) : "UNKNOWN";
                    boolean changed = !s.equals(state);
                    if (changed) {
                        state = s;
                        event("status " + spec.name + " " + s);
                    }
                    checkpoints(get("/jobs/" + id + "/checkpoints"));
                    if (changed || polls % 5 == 0) {
                        exceptions(get("/jobs/" + id + "/exceptions"));
                    }
                    if (s.equals("FAILED") || s.equals("CANCELED") || s.equals("FINISHED")) {
                        return;
                    }
                } catch (IOException e) {
                    if (!stopping) {
                        System.err.println("flinkjob: polling " + spec.name + ": " + e);
                    }
                } catch (InterruptedException e) {
                    return;
                }
                polls++;
                try {
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        private void checkpoints(String body) {
            Matcher f = FAILED.matcher(section(body, "\"counts\":"));
            if (f.find()) {
                long n = Long.parseLong(f.group(1));
                if (n > failedCount) {
                    failedCount = n;
                    event("checkpoint-failed " + spec.name + " " + n);
                }
            }
            // Every completed checkpoint of the history (newest first, the last 10), in id order, so
            // that none is skipped when two complete between polls.
            String history = section(body, "\"history\":[");
            TreeMap<Long, String> done = new TreeMap<>();
            for (String item : history.split("\\{\"className\":")) {
                Matcher st = STATUS.matcher(item);
                Matcher m = ID.matcher(item);
                if (st.find() && st.group(1).equals("COMPLETED") && m.find()) {
                    long n = Long.parseLong(m.group(1));
                    if (n > lastCompleted) {
                        Matcher p = PATH.matcher(item);
                        done.put(n, p.find() ? p.group(1).replaceFirst("^file:", "") : "-");
                    }
                }
            }
            for (Map.Entry<Long, String> d : done.entrySet()) {
                lastCompleted = d.getKey();
                event("checkpoint " + spec.name + " " + d.getKey() + " completed " + d.getValue());
            }
            String latest = section(body, "\"latest\":");
            String restored = section(latest, "\"restored\":");
            if (restored.startsWith("{")) {
                Matcher m = ID.matcher(restored);
                if (m.find()) {
                    long n = Long.parseLong(m.group(1));
                    if (n != lastRestored) {
                        lastRestored = n;
                        event("restored " + spec.name + " " + n);
                    }
                }
            }
        }

        private void exceptions(String body) {
            String entries = section(body, "\"entries\":[");
            if (entries.isEmpty()) {
                return;
            }
            // The newest entry comes first; its own fields end where its concurrent ones begin.
            int end = entries.indexOf("\"concurrentExceptions\"");
            String first = end > 0 ? entries.substring(0, end) : entries;
            Matcher ts = TS.matcher(first);
            if (!ts.find()) {
                return;
            }
            long t = Long.parseLong(ts.group(1));
            if (t <= lastFailureTs) {
                return;
            }
            lastFailureTs = t;
            Matcher e = EXC.matcher(first);
            String name = e.find() ? e.group(1) : "?";
            String root = name;
            Matcher c = CAUSE.matcher(first);
            while (c.find()) {
                root = c.group(1);
            }
            event("failure " + spec.name + " " + name + " " + root);
        }

        /** The text right after key in body ("" without it). */
        private static String section(String body, String key) {
            int i = body.indexOf(key);
            return i < 0 ? "" : body.substring(i + key.length());
        }
    }
}
