package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// EnvLibs is the classpath directory of the Kafka jars, written by scripts/kafka-up into its env.
const EnvLibs = "TXNSCOPE_KAFKA_LIBS"

// brokerReadyTimeout bounds a start: a healthy single node answers in about 5 s on two cores.
const brokerReadyTimeout = 60 * time.Second

// BrokerOptions says how a private broker is configured. The zero value is the broker of
// scripts/kafka-up: one KRaft node, PLAINTEXT on 127.0.0.1, replication factors 1.
type BrokerOptions struct {
	// Props are extra server.properties lines (KEY=VALUE); they come last, so they win.
	Props []string

	// Secure adds listeners on 127.0.0.1 with certificates the test generates (Broker.Certs):
	// SASL_SSL (SecureBootstrap), SSL requiring a client certificate (MutualTLSBootstrap,
	// principal "User:CN=txnscope-client"), SSL without client authentication (TLSBootstrap),
	// and SSL with a certificate that names only NamedHost, from another CA (NamedBootstrap,
	// Broker.Named). The PLAINTEXT listener stays, for setup. The plain SSL listeners are
	// anonymous: with the Authorizer, as super users.
	Secure bool
	// CertHosts are extra names for the broker's certificate (127.0.0.1 and localhost are always in it).
	CertHosts []string
	// ScramUsers are created when the storage is formatted (StorageTool --add-scram), so they
	// exist before the broker first answers.
	ScramUsers []ScramUser
	// PlainUsers are the SASL/PLAIN users of the SASL_SSL listener: name → password.
	PlainUsers map[string]string
	// OAuthBearer enables OAUTHBEARER on the SASL_SSL listener with Kafka's default, unsecured
	// validator: it accepts any unsigned JWT ("alg":"none") and takes the principal from "sub".
	OAuthBearer bool
	// OAuthJWKS adds a SASL_PLAINTEXT listener (OAuthBootstrap) whose OAUTHBEARER tokens Kafka's
	// own validator (OAuthBearerValidatorCallbackHandler) checks against this JWKS URL: signed
	// JWTs from a real OAuth 2 server. OAuthReauth sets its connections.max.reauth.ms.
	OAuthJWKS   string
	OAuthIssuer string // the "iss" the listener expects (Kafka 4.4 requires one)
	OAuthReauth time.Duration
	// Kerberos adds a SASL_PLAINTEXT listener (KerberosBootstrap) for GSSAPI, the broker logging
	// in as kafka/localhost@Realm from this keytab, against the KDC of Krb5Conf; KerberosReauth
	// sets its connections.max.reauth.ms.
	KerberosKeytab string
	Krb5Conf       string
	KerberosReauth time.Duration

	// Authorizer turns on org.apache.kafka.metadata.authorizer.StandardAuthorizer. The
	// PLAINTEXT and CONTROLLER listeners are anonymous, so User:ANONYMOUS is always a super
	// user (it is the broker's own principal toward its controller and for setup).
	Authorizer bool
	// SuperUsers are more super users, as principals ("User:admin").
	SuperUsers []string

	// SeparateController runs the KRaft controller in a JVM of its own (node 1), the broker
	// being node 2, as in a production cluster: a paused broker (Pause) then misses its
	// heartbeats while the controller runs on, and is fenced after broker.session.timeout.ms.
	// (Paused together, a combined node resumes its heartbeats before its controller notices.)
	// Not with Secure or ScramUsers.
	SeparateController bool
}

// ScramUser is one SCRAM credential created at format time.
type ScramUser struct {
	Mechanism string // SCRAM-SHA-256 or SCRAM-SHA-512
	Name      string
	Password  string
}

// Broker is a private single-node Kafka started by StartBroker: its own ports, data dir and log,
// so a test may kill and restart it without disturbing the shared brokers of scripts/kafka-up.
type Broker struct {
	// Bootstrap is the PLAINTEXT listener, 127.0.0.1:PORT.
	Bootstrap string
	// SecureBootstrap is the SASL_SSL listener (with BrokerOptions.Secure).
	SecureBootstrap string
	// MutualTLSBootstrap is the SSL listener that requires a client certificate (with Secure).
	MutualTLSBootstrap string
	// TLSBootstrap is an SSL listener without client authentication (with Secure).
	TLSBootstrap string
	// NamedBootstrap is an SSL listener whose certificate names only NamedHost, not the
	// address dialled: reachable only with the right server name (with Secure).
	NamedBootstrap string
	// OAuthBootstrap is the OAUTHBEARER listener validating signed tokens (with OAuthJWKS).
	OAuthBootstrap string
	// KerberosBootstrap is the GSSAPI listener (with KerberosKeytab).
	KerberosBootstrap string
	// Certs are the CA and the server and client certificates (with Secure).
	Certs kafkatest.Certs
	// Named is the CA and certificate of NamedBootstrap.
	Named NamedCert
	// LogFile is the broker's stdout and stderr.
	LogFile string
	// Config is its server.properties.
	Config string

	libs, dir string
	jvmProps  []string // -D flags
	ctrl      *Broker  // the controller's JVM, with SeparateController

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// StartBroker formats a fresh data dir in t.TempDir() and starts a broker on free ports, waiting
// until it answers a metadata request. It is killed when the test ends; if the test failed, the
// end of its log is printed. Without the Kafka jars the test is skipped, or fails under CI=true.
func StartBroker(t *testing.T, o BrokerOptions) *Broker {
	t.Helper()
	libs := kafkaLibs(t)
	if _, err := exec.LookPath("java"); err != nil {
		missing(t, "java is not on PATH: the private brokers need Java 17+")
	}
	b := &Broker{libs: libs, dir: t.TempDir(), jvmProps: o.jvmProps()}
	b.LogFile = filepath.Join(b.dir, "broker.log")
	b.Config = filepath.Join(b.dir, "server.properties")
	if o.Secure {
		b.Certs = kafkatest.WriteCerts(t, o.CertHosts...)
		b.Named = writeNamedCert(t)
	}
	if o.SeparateController && (o.Secure || len(o.ScramUsers) > 0) {
		t.Fatal("StartBroker: SeparateController does not combine with Secure or ScramUsers")
	}
	t.Cleanup(func() {
		b.stop()
		if _, err := os.Stat(b.LogFile); err == nil && t.Failed() {
			t.Logf("private broker %s, last lines of %s:\n%s", b.Bootstrap, b.LogFile, b.logTail(60))
		}
	})
	if err := writeLog4j(b.dir); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	// A port found free can be taken before the broker binds it: then start over on new ports.
	for attempt := 1; ; attempt++ {
		ports, err := freePorts(8)
		if err != nil {
			t.Fatal(err)
		}
		data := filepath.Join(b.dir, fmt.Sprintf("data-%d", attempt))
		props, id := serverProperties(b, o, ports, data), clusterID()
		if o.SeparateController {
			if err := b.startController(id, ports[1], attempt); err != nil {
				t.Fatal(err)
			}
			props += brokerOnly(b.Bootstrap)
		}
		if err := os.WriteFile(b.Config, []byte(props), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := b.format(id, !o.SeparateController, o.ScramUsers); err != nil {
			t.Fatalf("formatting the private broker's storage: %v", err)
		}
		if err := b.launch(); err != nil {
			t.Fatal(err)
		}
		err = b.waitReady(brokerReadyTimeout)
		if err == nil {
			t.Logf("private broker at %s ready in %s", b.Bootstrap, time.Since(start).Round(10*time.Millisecond))
			return b
		}
		if attempt < 3 && strings.Contains(b.logTail(200), "Address already in use") {
			b.stop()
			_ = os.Rename(b.LogFile, b.LogFile+fmt.Sprintf(".attempt%d", attempt))
			continue
		}
		t.Fatalf("private broker at %s: %v%s (the end of its log follows)", b.Bootstrap, err, b.firstError())
	}
}

// Kill sends SIGKILL, as a crashed machine would, and waits for the process to be gone.
func (b *Broker) Kill(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		t.Fatal("Broker.Kill: the broker is not running")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("broker pid %d still running 30 s after SIGKILL", cmd.Process.Pid)
	}
}

// Pause sends SIGSTOP: the broker holds its connections but answers nothing, as a broker in a
// long GC pause or on a frozen VM does. Its controller stops too, so on Resume it finds the
// broker's session expired (broker.session.timeout.ms) and fences it.
func (b *Broker) Pause(t *testing.T) { b.signal(t, syscall.SIGSTOP) }

// Resume sends SIGCONT to a paused broker.
func (b *Broker) Resume(t *testing.T) { b.signal(t, syscall.SIGCONT) }

func (b *Broker) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	b.mu.Lock()
	cmd := b.cmd
	b.mu.Unlock()
	if cmd == nil || !b.running() {
		t.Fatalf("Broker: %v: the broker is not running", sig)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatalf("Broker: %v: %v", sig, err)
	}
}

// Start restarts a killed broker on the same ports and data dir and waits until it answers.
func (b *Broker) Start(t *testing.T) {
	t.Helper()
	if b.running() {
		t.Fatal("Broker.Start: the broker is already running")
	}
	start := time.Now()
	if err := b.launch(); err != nil {
		t.Fatal(err)
	}
	if err := b.waitReady(brokerReadyTimeout); err != nil {
		t.Fatalf("private broker at %s after restart: %v (the end of its log follows)", b.Bootstrap, err)
	}
	t.Logf("private broker at %s restarted in %s", b.Bootstrap, time.Since(start).Round(10*time.Millisecond))
}

func (b *Broker) running() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cmd == nil {
		return false
	}
	select {
	case <-b.done:
		return false
	default:
		return true
	}
}

func (b *Broker) stop() {
	if b.ctrl != nil {
		defer b.ctrl.stop()
	}
	b.mu.Lock()
	cmd, done := b.cmd, b.done
	b.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
}

// launch starts the JVM with kafka-up's flags; the log file is appended to, so a restart's log
// follows the first run's.
func (b *Broker) launch() error {
	log, err := os.OpenFile(b.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	args := append([]string{"-Xms256m", "-Xmx512m",
		"-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
		"-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(b.dir, "log4j2.properties")}, b.jvmProps...)
	cmd := exec.Command("java", append(args, "-cp", filepath.Join(b.libs, "*"), "kafka.Kafka", b.Config)...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = brokerProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("starting the broker JVM: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	b.mu.Lock()
	b.cmd, b.done = cmd, done
	b.mu.Unlock()
	return nil
}

// waitReady polls with a metadata request until the broker lists itself.
func (b *Broker) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Bootstrap), kgo.DialTimeout(time.Second),
		kgo.RequestRetries(0), kgo.RetryTimeout(time.Second))
	if err != nil {
		return err
	}
	defer cl.Close()
	b.mu.Lock()
	done := b.done
	b.mu.Unlock()
	last := errors.New("no answer yet")
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("the broker process exited during startup")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := kmsg.NewPtrMetadataRequest().RequestWith(ctx, cl)
		cancel()
		switch {
		case err != nil:
			last = err
		case len(resp.Brokers) == 0:
			last = errors.New("metadata lists no broker yet")
		default:
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no metadata answer within %s (last: %v)", limit, last)
}

// format runs the storage tool as kafka-up does, adding the SCRAM users; standalone formats a
// node that is its own controller quorum.
func (b *Broker) format(id string, standalone bool, users []ScramUser) error {
	args := []string{"-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile=" + filepath.Join(b.dir, "log4j2.properties"),
		"-cp", filepath.Join(b.libs, "*"), "kafka.tools.StorageTool",
		"format", "-t", id, "-c", b.Config}
	if standalone {
		args = append(args, "--standalone")
	}
	for _, u := range users {
		args = append(args, "--add-scram", fmt.Sprintf("%s=[name=%s,password=%s]", u.Mechanism, u.Name, u.Password))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", args...)
	cmd.SysProcAttr = brokerProcAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}

// startController formats and starts the separate controller (node 1) on port, as a Broker whose
// files sit next to b's.
func (b *Broker) startController(id string, port, attempt int) error {
	if b.ctrl != nil {
		b.ctrl.stop()
	}
	c := &Broker{libs: b.libs, dir: b.dir}
	c.LogFile = filepath.Join(b.dir, "controller.log")
	c.Config = filepath.Join(b.dir, "controller.properties")
	addr := "127.0.0.1:" + strconv.Itoa(port)
	props := strings.Join([]string{
		"# written by integration.StartBroker (SeparateController)",
		"process.roles=controller",
		"node.id=1",
		"controller.quorum.bootstrap.servers=" + addr,
		"listeners=CONTROLLER://" + addr,
		"controller.listener.names=CONTROLLER",
		"listener.security.protocol.map=CONTROLLER:PLAINTEXT",
		"log.dirs=" + filepath.Join(b.dir, fmt.Sprintf("controller-data-%d", attempt)),
		"broker.session.timeout.ms=4000",
		"broker.heartbeat.interval.ms=500",
	}, "\n") + "\n"
	if err := os.WriteFile(c.Config, []byte(props), 0o600); err != nil {
		return err
	}
	if err := c.format(id, true, nil); err != nil {
		return fmt.Errorf("formatting the private controller's storage: %w", err)
	}
	b.ctrl = c
	return c.launch()
}

// brokerOnly turns serverProperties' combined node into broker node 2 of a separate controller:
// later lines win.
func brokerOnly(bootstrap string) string {
	return strings.Join([]string{
		"# SeparateController: the broker only",
		"process.roles=broker",
		"node.id=2",
		"listeners=PLAINTEXT://" + bootstrap,
	}, "\n") + "\n"
}

func writeLog4j(dir string) error {
	const cfg = `status = warn
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.stdout.ref = STDOUT
logger.clients.name = org.apache.kafka.clients
logger.clients.level = WARN
`
	return os.WriteFile(filepath.Join(dir, "log4j2.properties"), []byte(cfg), 0o600)
}

// logTail returns the last n lines of the broker log.
func (b *Broker) logTail(n int) string {
	data, err := os.ReadFile(b.LogFile)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// firstError is the log's first ERROR line, which the shutdown after it pushes out of the tail.
func (b *Broker) firstError() string {
	data, _ := os.ReadFile(b.LogFile)
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.Contains(l, "] ERROR ") {
			// The exception's message is on the next line.
			return ": " + strings.Join(lines[i:min(i+2, len(lines))], " ")
		}
	}
	return ""
}

// freePorts picks ports below Linux's ephemeral range (32768+), as kafka-up does, so that while a
// killed broker is down no outgoing connection is handed its port and Start can bind it again.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 500 {
			return nil, errors.New("no free port on 127.0.0.1 between 20000 and 32000")
		}
		r, err := rand.Int(rand.Reader, big.NewInt(12000))
		if err != nil {
			return nil, err
		}
		p := 20000 + int(r.Int64())
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		ports = append(ports, p)
	}
	return ports, nil
}

// clusterID is a random KRaft cluster id (16 bytes, URL-safe base64 without padding).
func clusterID() string {
	for {
		var raw [16]byte
		_, _ = rand.Read(raw[:])
		id := base64.RawURLEncoding.EncodeToString(raw[:])
		if !strings.HasPrefix(id, "-") {
			return id
		}
	}
}

// kafkaLibs finds the Kafka classpath in $TXNSCOPE_KAFKA_LIBS, like the shared brokers' addresses
// only from scripts/kafka-up's env: a plain `go test ./...` stays fast (and skips) even on a
// machine where the jars happen to be cached.
func kafkaLibs(t *testing.T) string {
	t.Helper()
	v := strings.TrimSpace(os.Getenv(EnvLibs))
	if v == "" {
		missing(t, EnvLibs+" is not set: run scripts/kafka-up (it fetches the jars), then `source "+
			stateDir()+"/env` before `go test ./integration/...`")
		return ""
	}
	if _, err := os.Stat(filepath.Join(v, ".complete")); err != nil {
		missing(t, EnvLibs+"="+v+" holds no complete Kafka classpath: run scripts/kafka-up")
	}
	return v
}

func stateDir() string {
	if s := os.Getenv("TXNSCOPE_KAFKA_STATE"); s != "" {
		return s
	}
	return "/tmp/txnscope-kafka"
}

// missing skips the test, or fails it under CI=true, where nothing may be skipped silently.
func missing(t *testing.T, msg string) {
	t.Helper()
	if isCI() {
		t.Fatal("CI=true and " + msg)
	}
	t.Skip(msg)
}
