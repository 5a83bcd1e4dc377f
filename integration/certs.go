package integration

import (
	"testing"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
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
	c := kafkatest.WriteCertsFor(t, NamedHost)
	return NamedCert{CAFile: c.CAFile, ChainFile: c.ServerChainFile}
}
