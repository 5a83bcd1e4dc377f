package integration

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// NamedHost is the only name in the certificate of a Broker's NamedBootstrap listener. It does not
// resolve: a client dials 127.0.0.1 and must be told to expect this name (--tls-server-name).
const NamedHost = "broker.txnscope.test"

// NamedCert is a second CA and a broker certificate that names only NamedHost. kafkatest.WriteCerts
// always puts 127.0.0.1 and localhost into its certificate, so it cannot show that a server-name
// override is what makes a connection succeed.
type NamedCert struct {
	CAFile    string // this CA's certificate; not the CA of Broker.Certs
	ChainFile string // key, certificate and CA, for Kafka's ssl.keystore.type=PEM
}

func writeNamedCert(t *testing.T) NamedCert {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, srvKey := ecKey(t), ecKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(now.UnixNano()),
		Subject:               pkix.Name{CommonName: "txnscope named-listener CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("named CA: %v", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatalf("named CA: %v", err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano() + 1),
		Subject:      pkix.Name{CommonName: NamedHost},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{NamedHost},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatalf("named certificate: %v", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatalf("named key: %v", err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	chain := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER})...)
	chain = append(chain, caPEM...)
	c := NamedCert{CAFile: filepath.Join(dir, "named-ca.pem"), ChainFile: filepath.Join(dir, "named-chain.pem")}
	for f, data := range map[string][]byte{c.CAFile: caPEM, c.ChainFile: chain} {
		if err := os.WriteFile(f, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func ecKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
