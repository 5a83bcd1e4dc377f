package e2e

import (
	"crypto/tls"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

const (
	e2eUser = "txnscope"
	e2ePass = "e2e-Secret-Pa55word"
)

// securedCluster is kfake with a SASL_SSL listener: TLS with a private CA,
// mutual TLS if asked, and a SCRAM-SHA-256 user.
type securedCluster struct {
	c     *kfake.Cluster
	boot  string
	certs kafkatest.Certs
}

// passwordEnv is the environment variable the program reads the SASL
// password from.
const passwordEnv = "TXNSCOPE_SASL_PASSWORD"

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func newSecuredCluster(t *testing.T, mutual bool) securedCluster {
	t.Helper()
	certs := kafkatest.WriteCerts(t)
	srv := certs.ServerTLS
	if mutual {
		srv = certs.ServerMutualTLS
	}
	c, bs := kafkatest.NewCluster(t, kfake.TLS(srv), kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", e2eUser, e2ePass))
	return securedCluster{c: c, boot: strings.Join(bs, ","), certs: certs}
}

// openTxn leaves a transaction open for id on the secured cluster.
func (s securedCluster) openTxn(t *testing.T, id string) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(s.certs.ClientCertFile, s.certs.ClientKeyFile)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(s.boot, ",")...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: s.certs.ClientCA, Certificates: []tls.Certificate{pair}}),
		kgo.SASL(scram.Auth{User: e2eUser, Pass: e2ePass}.AsSha256Mechanism()),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.AllowAutoTopicCreation(),
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	kafkatest.Begin(t, cl)
	kafkatest.Produce(t, cl, "orders", 0, 2)
}

// runWithEnv is runProgram with extra environment variables, checking that
// the password shows nowhere.
func runWithEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := runProgramEnv(t, env, args...)
	if strings.Contains(r.stdout+r.stderr, e2ePass) {
		t.Errorf("txnscope %q shows the password: stdout %q, stderr %q", args, r.stdout, r.stderr)
	}
	return r
}

func snapshotIDs(t *testing.T, r result) []string {
	t.Helper()
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var doc struct {
		Transactions []struct {
			ID string `json:"transactional_id"`
		} `json:"transactions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	var ids []string
	for _, x := range doc.Transactions {
		ids = append(ids, x.ID)
	}
	return ids
}

func TestE2ESecureSnapshotFlags(t *testing.T) {
	s := newSecuredCluster(t, false)
	s.openTxn(t, "secure-sink-0-1")
	pwFile := writeFile(t, "password", e2ePass+"\n")
	base := []string{"snapshot", "-o", "json", "-b", s.boot, "--timeout", "5s", "--tls-ca", s.certs.CAFile,
		"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", e2eUser}

	if ids := snapshotIDs(t, runWithEnv(t, nil, append(base, "--sasl-password-file", pwFile)...)); len(ids) != 1 || ids[0] != "secure-sink-0-1" {
		t.Errorf("with --sasl-password-file: ids %q", ids)
	}
	if ids := snapshotIDs(t, runWithEnv(t, []string{passwordEnv + "=" + e2ePass}, base...)); len(ids) != 1 {
		t.Errorf("with %s: ids %q", passwordEnv, ids)
	}

	// Wrong password: kfake hangs up (a real broker answers first, below).
	r := runWithEnv(t, []string{passwordEnv + "=not-" + e2ePass[4:]}, base...)
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "cannot reach the cluster") || r.stdout != "" {
		t.Errorf("wrong password: exit %d, stdout %q, stderr %q; want 1 and one line", r.code, r.stdout, r.stderr)
	}

	// Skipping verification works and says so on stderr, once.
	r = runWithEnv(t, []string{passwordEnv + "=" + e2ePass}, "snapshot", "-b", s.boot, "--tls-insecure-skip-verify",
		"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", e2eUser)
	if r.code != 0 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "warning: TLS certificate NOT verified") {
		t.Errorf("insecure: exit %d, stderr %q", r.code, r.stderr)
	}

	// TLS to a broker whose CA is not given: the system roots do not know it.
	r = runWithEnv(t, []string{passwordEnv + "=" + e2ePass}, "snapshot", "-b", s.boot, "--tls",
		"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", e2eUser, "--timeout", "5s")
	if r.code != 1 || !strings.Contains(r.stderr, "certificate signed by unknown authority") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("unknown CA: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestE2ESecureCommandConfig(t *testing.T) {
	s := newSecuredCluster(t, true)
	s.openTxn(t, "secure-sink-1-1")
	props := func(password string, extra ...string) string {
		return writeFile(t, "client.properties", strings.Join(append([]string{
			"# as for kafka-transactions.sh --command-config",
			"bootstrap.servers=" + s.boot,
			"security.protocol=SASL_SSL",
			"sasl.mechanism=SCRAM-SHA-256",
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \`,
			`    username="` + e2eUser + `" password="` + password + `";`,
			"ssl.truststore.type=PEM",
			"ssl.truststore.location=" + s.certs.CAFile,
			"ssl.keystore.type=PEM",
			"ssl.keystore.location=" + s.certs.ClientChainFile,
			"client.id=ops-laptop",
		}, extra...), "\n")+"\n")
	}
	if ids := snapshotIDs(t, runWithEnv(t, nil, "snapshot", "-o", "json", "--command-config", props(e2ePass))); len(ids) != 1 || ids[0] != "secure-sink-1-1" {
		t.Errorf("ids %q", ids)
	}
	// The one-shot commands read it too.
	r := runWithEnv(t, nil, "list", "--command-config", props(e2ePass))
	if r.code != 0 || !strings.Contains(r.stdout, "secure-sink-1-1") {
		t.Errorf("list: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Wrong password in the file.
	r = runWithEnv(t, nil, "describe", "--transactional-id", "secure-sink-1-1", "--timeout", "5s", "--command-config", props("wrong-"+e2ePass[:6]))
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("wrong password: exit %d, stderr %q; want 1 and one line", r.code, r.stderr)
	}
	// A JKS truststore: exit 2 before connecting, naming the key and the way out.
	jks := props(e2ePass, "ssl.truststore.type=JKS", "ssl.truststore.password="+e2ePass)
	r = runWithEnv(t, nil, "snapshot", "--command-config", jks)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if r.code != 2 || !strings.Contains(first, "line 12: ssl.truststore.type=JKS is not supported: convert it to PEM (keytool") {
		t.Errorf("JKS: exit %d, stderr %q", r.code, r.stderr)
	}
	// Flags win over the file: the client certificate of another CA is refused.
	other := kafkatest.WriteCerts(t)
	r = runWithEnv(t, nil, "snapshot", "--timeout", "5s", "--command-config", props(e2ePass), "--tls-cert", other.ClientCertFile, "--tls-key", other.ClientKeyFile)
	if r.code != 1 || !strings.Contains(r.stderr, "tls") {
		t.Errorf("other client certificate: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A real broker answers bad credentials with SASL_AUTHENTICATION_FAILED and
// its reason; kfake is made to do the same.
func TestE2EAuthenticationFailedReason(t *testing.T) {
	s := newSecuredCluster(t, false)
	s.c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		s.c.KeepControl()
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	env := []string{passwordEnv + "=" + e2ePass}
	flags := []string{"-b", s.boot, "--tls-ca", s.certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", e2eUser, "--timeout", "5s"}
	for _, args := range [][]string{
		{"snapshot"},
		{"list"},
		{"describe", "--transactional-id", "x"},
		{"describe-producers", "--topic", "orders", "--partition", "0"},
		{"find-hanging", "--topic", "orders"},
		{"abort", "--topic", "orders", "--partition", "0", "--start-offset", "0", "--yes", "--audit-log", auditLog},
		{"force-terminate", "--transactional-id", "x", "--yes", "--audit-log", auditLog},
	} {
		r := runWithEnv(t, env, append(args, flags...)...)
		if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "SASL_AUTHENTICATION_FAILED") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and one line with SASL_AUTHENTICATION_FAILED", args[0], r.code, r.stdout, r.stderr)
		}
		if r.took > 4*time.Second {
			t.Errorf("%s: took %s, waiting out the timeout", args[0], r.took)
		}
	}
	if b, err := os.ReadFile(auditLog); err == nil && strings.Contains(string(b), e2ePass) {
		t.Errorf("the audit log shows the password")
	}
}

// The actions over SASL_SSL, and what they leave in the audit log.
func TestE2ESecureForceTerminateAudit(t *testing.T) {
	s := newSecuredCluster(t, false)
	s.openTxn(t, "secure-sink-2-1")
	auditLog := filepath.Join(t.TempDir(), "audit.log")
	r := runWithEnv(t, []string{passwordEnv + "=" + e2ePass}, "force-terminate", "--transactional-id", "secure-sink-2-1", "--yes",
		"--audit-log", auditLog, "-b", s.boot, "--tls-ca", s.certs.CAFile, "--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", e2eUser)
	if r.code != 0 {
		t.Fatalf("force-terminate: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "secure-sink-2-1") || strings.Contains(string(b), e2ePass) {
		t.Errorf("audit log: %s", b)
	}
}
