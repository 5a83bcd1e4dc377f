package kafkaadmin_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
	"github.com/txnscope/txnscope/kafkaadmin"
)

const (
	secUser = "alice"
	secPass = "Pa55-w0rd-never-shown"
)

// securedRefresh reads the cluster once with sec and returns the error and
// how long it took to come back.
func securedRefresh(t *testing.T, boot []string, sec conn.Security) (time.Duration, error) {
	t.Helper()
	a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: boot, Timeout: 5 * time.Second, Security: sec})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	_, err = a.Refresh(ctx, nil)
	return time.Since(start), err
}

// refused checks a failure: one line, quick (not the timeout), naming want,
// never the password.
func refused(t *testing.T, err error, took time.Duration, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("refresh succeeded, want an error with %q", want)
	}
	msg := err.Error()
	t.Logf("error: %s", msg)
	if !strings.Contains(msg, want) {
		t.Errorf("error %q does not say %q", msg, want)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if strings.Contains(msg, secPass) {
		t.Errorf("error shows the password: %q", msg)
	}
	if took > 3*time.Second {
		t.Errorf("took %s to fail: it waited out the timeout", took)
	}
}

func TestSASLMechanisms(t *testing.T) {
	_, boot := kafkatest.NewCluster(t, kfake.EnableSASL(),
		kfake.Superuser(conn.Plain, secUser, secPass),
		kfake.Superuser(conn.ScramSHA256, secUser, secPass),
		kfake.Superuser(conn.ScramSHA512, secUser, secPass))
	for _, mech := range []string{conn.Plain, conn.ScramSHA256, conn.ScramSHA512, "scram-sha-512"} {
		t.Run(mech, func(t *testing.T) {
			_, err := securedRefresh(t, boot, conn.Security{SASL: &conn.SASL{Mechanism: mech, Username: secUser, Password: secPass}})
			if err != nil {
				t.Fatalf("right credentials: %v", err)
			}
			// kfake hangs up on bad credentials where a real broker answers
			// SASL_AUTHENTICATION_FAILED first (TestSASLRefusalReason).
			took, err := securedRefresh(t, boot, conn.Security{SASL: &conn.SASL{Mechanism: mech, Username: secUser, Password: "wrong-" + secPass}})
			refused(t, err, took, "cannot reach the cluster")
			took, err = securedRefresh(t, boot, conn.Security{SASL: &conn.SASL{Mechanism: mech, Username: "mallory", Password: secPass}})
			refused(t, err, took, "cannot reach the cluster")
		})
	}
}

// brokerRefuses makes kfake answer every SASLAuthenticate as a real broker
// answers bad credentials, with its error code and message.
func brokerRefuses(c *kfake.Cluster, seen func([]byte)) {
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if seen != nil {
			seen(req.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes)
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
}

func TestSASLRefusalReason(t *testing.T) {
	c, boot := kafkatest.NewCluster(t, kfake.EnableSASL(), kfake.Superuser(conn.ScramSHA256, secUser, secPass))
	brokerRefuses(c, nil)
	took, err := securedRefresh(t, boot, conn.Security{SASL: &conn.SASL{Mechanism: conn.ScramSHA256, Username: secUser, Password: secPass}})
	refused(t, err, took, "SASL_AUTHENTICATION_FAILED")
}

// kfake does not speak OAUTHBEARER: the handshake is accepted here and the
// token checked in what the client sends.
func TestSASLOAuthBearer(t *testing.T) {
	c, boot := kafkatest.NewCluster(t, kfake.EnableSASL(), kfake.Superuser(conn.Plain, secUser, secPass))
	c.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		resp := req.ResponseKind().(*kmsg.SASLHandshakeResponse)
		if req.(*kmsg.SASLHandshakeRequest).Mechanism != conn.OAuthBearer {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
		resp.SupportedMechanisms = []string{conn.OAuthBearer}
		return resp, nil, true
	})
	var (
		mu   sync.Mutex
		sent [][]byte
	)
	brokerRefuses(c, func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, bytes.Clone(b))
	})
	token := "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ0eG5zY29wZSJ9." + secPass
	took, err := securedRefresh(t, boot, conn.Security{SASL: &conn.SASL{Mechanism: conn.OAuthBearer, Password: conn.Secret(token)}})
	refused(t, err, took, "SASL_AUTHENTICATION_FAILED")
	if strings.Contains(err.Error(), token) {
		t.Errorf("error shows the token: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) == 0 || !bytes.Contains(sent[0], []byte("auth=Bearer "+token+"\x01")) {
		t.Errorf("the broker was not sent the token as an RFC 7628 bearer: %q", sent)
	}
}

func TestTLS(t *testing.T) {
	certs := kafkatest.WriteCerts(t, "kafka.internal")
	other := kafkatest.WriteCerts(t)
	_, boot := kafkatest.NewCluster(t, kfake.TLS(certs.ServerTLS))
	_, mutual := kafkatest.NewCluster(t, kfake.TLS(certs.ServerMutualTLS))
	// kfake listens on 127.0.0.1: a name the certificate does not hold.
	_, wrongName := kafkatest.NewCluster(t, kfake.TLS(kafkatest.WriteCerts(t).ServerTLS))
	for _, c := range []struct {
		name string
		boot []string
		tls  conn.TLS
		want string // empty: success
	}{
		{"private CA", boot, conn.TLS{CAFile: certs.CAFile}, ""},
		{"server name", boot, conn.TLS{CAFile: certs.CAFile, ServerName: "kafka.internal"}, ""},
		{"wrong server name", boot, conn.TLS{CAFile: certs.CAFile, ServerName: "kafka.example"}, "certificate is valid for"},
		{"wrong name, hostname check off", boot, conn.TLS{CAFile: certs.CAFile, ServerName: "kafka.example", SkipHostnameCheck: true}, ""},
		{"wrong CA, hostname check off", boot, conn.TLS{CAFile: other.CAFile, SkipHostnameCheck: true}, "unknown authority"},
		{"wrong CA", boot, conn.TLS{CAFile: other.CAFile}, "certificate signed by unknown authority"},
		{"system roots", boot, conn.TLS{}, "unknown authority"},
		{"insecure skip verify", boot, conn.TLS{InsecureSkipVerify: true}, ""},
		{"insecure skip verify, wrong CA", boot, conn.TLS{CAFile: other.CAFile, InsecureSkipVerify: true}, ""},
		{"mutual TLS", mutual, conn.TLS{CAFile: certs.CAFile, CertFile: certs.ClientCertFile, KeyFile: certs.ClientKeyFile}, ""},
		{"mutual TLS, one PEM for cert and key", mutual, conn.TLS{CAFile: certs.CAFile, CertFile: certs.ClientChainFile, KeyFile: certs.ClientChainFile}, ""},
		{"mutual TLS, no client certificate", mutual, conn.TLS{CAFile: certs.CAFile}, "cannot reach the cluster"},
		{"mutual TLS, certificate of another CA", mutual, conn.TLS{CAFile: certs.CAFile, CertFile: other.ClientCertFile, KeyFile: other.ClientKeyFile}, "cannot reach the cluster"},
		{"mutual TLS, inline PEM", mutual, conn.TLS{CAPEM: read(t, certs.CAFile), CertPEM: read(t, certs.ClientCertFile), KeyPEM: conn.Secret(read(t, certs.ClientKeyFile))}, ""},
		{"inline CA of another CA", boot, conn.TLS{CAPEM: read(t, other.CAFile)}, "unknown authority"},
		{"hostname checked by default", wrongName, conn.TLS{InsecureSkipVerify: false, CAFile: certs.CAFile}, "unknown authority"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := c.tls
			took, err := securedRefresh(t, c.boot, conn.Security{TLS: &tc})
			if c.want == "" {
				if err != nil {
					t.Fatalf("refresh: %v", err)
				}
				return
			}
			refused(t, err, took, c.want)
		})
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTLSWithSASL(t *testing.T) {
	certs := kafkatest.WriteCerts(t)
	_, boot := kafkatest.NewCluster(t, kfake.TLS(certs.ServerTLS), kfake.EnableSASL(),
		kfake.Superuser(conn.ScramSHA512, secUser, secPass))
	sasl := &conn.SASL{Mechanism: conn.ScramSHA512, Username: secUser, Password: secPass}
	if _, err := securedRefresh(t, boot, conn.Security{TLS: &conn.TLS{CAFile: certs.CAFile}, SASL: sasl}); err != nil {
		t.Fatalf("SASL_SSL: %v", err)
	}
	took, err := securedRefresh(t, boot, conn.Security{SASL: sasl})
	refused(t, err, took, "TLS")
	took, err = securedRefresh(t, boot, conn.Security{TLS: &conn.TLS{CAFile: certs.CAFile}})
	refused(t, err, took, "SASL")
}

// A real broker's plaintext listener hangs up on a TLS client hello (it
// reads it as an oversized request); the client must say so at once.
func TestTLSToPlaintextListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Read(make([]byte, 4))
			conn.Close()
		}
	})
	certs := kafkatest.WriteCerts(t)
	took, err := securedRefresh(t, []string{ln.Addr().String()}, conn.Security{TLS: &conn.TLS{CAFile: certs.CAFile}})
	refused(t, err, took, "TLS")
}

func TestSecurityConfigErrors(t *testing.T) {
	certs := kafkatest.WriteCerts(t)
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.jks")
	if err := os.WriteFile(notPEM, []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2}, 0o600); err != nil {
		t.Fatal(err)
	}
	encrypted := filepath.Join(dir, "encrypted.key")
	if err := os.WriteFile(encrypted, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte(secPass)}), 0o600); err != nil {
		t.Fatal(err)
	}
	otherKey := filepath.Join(dir, "other.key")
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	if err := os.WriteFile(otherKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope.pem")
	pw := conn.Secret(secPass)
	for _, c := range []struct {
		name string
		sec  conn.Security
		want []string
	}{
		{"missing CA", conn.Security{TLS: &conn.TLS{CAFile: missing}}, []string{missing, "no such file"}},
		{"CA not PEM", conn.Security{TLS: &conn.TLS{CAFile: notPEM}}, []string{notPEM, "no PEM certificate"}},
		{"cert without key", conn.Security{TLS: &conn.TLS{CertFile: certs.ClientCertFile}}, []string{certs.ClientCertFile, "without its key"}},
		{"key without cert", conn.Security{TLS: &conn.TLS{KeyFile: certs.ClientKeyFile}}, []string{certs.ClientKeyFile, "without its certificate"}},
		{"key in the cert's place", conn.Security{TLS: &conn.TLS{CertFile: certs.ClientKeyFile, KeyFile: certs.ClientKeyFile}}, []string{certs.ClientKeyFile, "no PEM certificate"}},
		{"cert in the key's place", conn.Security{TLS: &conn.TLS{CertFile: certs.ClientCertFile, KeyFile: certs.ClientCertFile}}, []string{"no PEM private key"}},
		{"key of another cert", conn.Security{TLS: &conn.TLS{CertFile: certs.ClientCertFile, KeyFile: otherKey}}, []string{otherKey, "does not match"}},
		{"encrypted key", conn.Security{TLS: &conn.TLS{CertFile: certs.ClientCertFile, KeyFile: encrypted}}, []string{encrypted, "encrypted", "openssl pkcs8"}},
		{"inline key without chain", conn.Security{TLS: &conn.TLS{KeyPEM: conn.Secret(read(t, certs.ClientKeyFile))}}, []string{"inline TLS client key is given without its certificate chain"}},
		{"inline encrypted key", conn.Security{TLS: &conn.TLS{CertPEM: read(t, certs.ClientCertFile), KeyPEM: conn.Secret(read(t, encrypted))}}, []string{"inline TLS client key is encrypted"}},
		{"unknown mechanism", conn.Security{SASL: &conn.SASL{Mechanism: "SCRAM-SHA-1", Username: secUser, Password: pw}}, []string{`"SCRAM-SHA-1"`, "SCRAM-SHA-512"}},
		{"kerberos without a login", conn.Security{SASL: &conn.SASL{Mechanism: "GSSAPI", Username: secUser, Password: pw}}, []string{"GSSAPI needs a Kerberos login"}},
		{"kerberos, krb5.conf missing", conn.Security{SASL: &conn.SASL{Mechanism: "GSSAPI", Kerberos: &conn.Kerberos{ServiceName: "kafka",
			Keytab: "/nonexistent.keytab", Principal: "a@B", Krb5Conf: "/nonexistent/krb5.conf", Origin: "sasl.jaas.config (line 3)"}}},
			[]string{"GSSAPI: krb5.conf /nonexistent/krb5.conf", "KRB5_CONFIG"}},
		{"no password", conn.Security{SASL: &conn.SASL{Mechanism: conn.Plain, Username: secUser}}, []string{"PLAIN needs a password"}},
		{"no username", conn.Security{SASL: &conn.SASL{Mechanism: conn.ScramSHA256, Password: pw}}, []string{"SCRAM-SHA-256 needs a username"}},
		{"no token", conn.Security{SASL: &conn.SASL{Mechanism: conn.OAuthBearer}}, []string{"OAUTHBEARER needs a token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: []string{"127.0.0.1:1"}, Security: c.sec})
			if err == nil {
				a.Close()
				t.Fatalf("New accepted it")
			}
			msg := err.Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if strings.Contains(msg, secPass) || strings.Contains(msg, "\n") {
				t.Errorf("error shows a secret or spans lines: %q", msg)
			}
		})
	}
}
