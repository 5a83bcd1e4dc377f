package kafkatest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a private CA with one server and one client certificate, as PEM
// files in a test's temporary directory.
type Certs struct {
	Dir            string
	CAFile         string // the CA certificate
	ServerCertFile string // server certificate only
	ServerKeyFile  string // unencrypted PKCS#8 ("PRIVATE KEY")
	// ServerChainFile holds the server key, its certificate and the CA
	// certificate in one file: what Kafka's ssl.keystore.type=PEM with
	// ssl.keystore.location reads.
	ServerChainFile string
	ClientCertFile  string // CN "txnscope-client", signed by the CA
	ClientKeyFile   string // unencrypted PKCS#8
	// ClientChainFile holds the client key and certificate, for a Java
	// client's ssl.keystore.type=PEM.
	ClientChainFile string

	// ServerTLS is a server-side config for kfake.TLS: it asks for a client
	// certificate and verifies one if given, but does not require it.
	ServerTLS *tls.Config
	// ServerMutualTLS is ServerTLS requiring a client certificate signed by
	// the CA.
	ServerMutualTLS *tls.Config
	// ClientCA holds the CA, for clients and for verifying client certificates.
	ClientCA *x509.CertPool
}

// WriteCerts generates the CA and certificates, valid from an hour ago for a
// day. The server certificate names hosts (IP SANs for IP addresses, DNS
// names otherwise) plus 127.0.0.1 and localhost.
func WriteCerts(t testing.TB, hosts ...string) Certs {
	t.Helper()
	return WriteCertsFor(t, append([]string{"127.0.0.1", "localhost"}, hosts...)...)
}

// WriteCertsFor is WriteCerts with a server certificate naming exactly hosts:
// a client dialling 127.0.0.1 must then be told which name to expect.
func WriteCertsFor(t testing.TB, hosts ...string) Certs {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()

	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: "txnscope test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("ca certificate: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("ca certificate: %v", err)
	}
	srvDER, srvKey := signed(t, "server", serverTemplate(t, now, hosts), ca, caKey)
	cliDER, cliKey := signed(t, "client", clientTemplate(t, now), ca, caKey)

	caPEM := pemBlock("CERTIFICATE", caDER)
	srvPEM := pemBlock("CERTIFICATE", srvDER)
	srvKeyPEM := keyPEM(t, srvKey)
	cliPEM := pemBlock("CERTIFICATE", cliDER)
	cliKeyPEM := keyPEM(t, cliKey)

	c := Certs{
		Dir:             dir,
		CAFile:          write(t, dir, "ca.pem", caPEM),
		ServerCertFile:  write(t, dir, "server.pem", srvPEM),
		ServerKeyFile:   write(t, dir, "server.key", srvKeyPEM),
		ServerChainFile: write(t, dir, "server-chain.pem", cat(srvKeyPEM, srvPEM, caPEM)),
		ClientCertFile:  write(t, dir, "client.pem", cliPEM),
		ClientKeyFile:   write(t, dir, "client.key", cliKeyPEM),
		ClientChainFile: write(t, dir, "client-chain.pem", cat(cliKeyPEM, cliPEM)),
	}
	c.ClientCA = x509.NewCertPool()
	c.ClientCA.AddCert(ca)
	c.ServerTLS = serverTLS(t, cat(srvPEM, caPEM), srvKeyPEM, c.ClientCA)
	c.ServerMutualTLS = c.ServerTLS.Clone()
	c.ServerMutualTLS.ClientAuth = tls.RequireAndVerifyClientCert
	return c
}

// serverTemplate is the brokers' certificate, naming hosts.
func serverTemplate(t testing.TB, now time.Time, hosts []string) *x509.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: "txnscope test broker"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		// Kafka's inter-broker and controller connections present the same
		// certificate as clients.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	seen := map[string]bool{}
	for _, h := range hosts {
		if h == "" || seen[h] {
			continue
		}
		seen[h] = true
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	return tmpl
}

// clientTemplate is the client certificate of mutual TLS.
func clientTemplate(t testing.TB, now time.Time) *x509.Certificate {
	t.Helper()
	return &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: "txnscope-client"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
}

// signed is tmpl with a new key, signed by the CA.
func signed(t testing.TB, what string, tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key := newKey(t)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatalf("%s certificate: %v", what, err)
	}
	return der, key
}

// serverTLS is kfake's server side: it verifies a client certificate if one
// is given.
func serverTLS(t testing.TB, chainPEM, key []byte, clientCA *x509.CertPool) *tls.Config {
	t.Helper()
	pair, err := tls.X509KeyPair(chainPEM, key)
	if err != nil {
		t.Fatalf("server key pair: %v", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.VerifyClientCertIfGiven,
		ClientCAs:    clientCA,
		MinVersion:   tls.VersionTLS12,
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	return k
}

func serial(t testing.TB) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatalf("serial: %v", err)
	}
	return n
}

func keyPEM(t testing.TB, k *ecdsa.PrivateKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	return pemBlock("PRIVATE KEY", der)
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func write(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	return p
}
