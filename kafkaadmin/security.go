package kafkaadmin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"maps"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/inputfile"
	"github.com/txnscope/txnscope/internal/oauthtoken"
)

// securityOptions turns s into the Kafka client's options. Its errors name
// the file or the mechanism at fault and never a credential.
func securityOptions(s conn.Security, dialTimeout time.Duration) ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS != nil {
		cfg, err := tlsConfig(s.TLS)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.Dialer(tlsDialer(cfg, dialTimeout)))
	}
	if s.SASL != nil {
		m, err := saslMechanism(s.SASL)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// CheckTLS reads and parses t's files and PEM text as creating a client
// will, so that a command line can refuse a bad one before anything connects.
func CheckTLS(t *conn.TLS) error {
	_, err := tlsConfig(t)
	return err
}

// tlsConfig builds the client side of the handshake. The broker's name is
// set per broker by the Kafka client when ServerName is empty.
func tlsConfig(t *conn.TLS) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         tls.VersionTLS12,
		ServerName:         t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify,
	}
	switch {
	case t.CAFile != "":
		data, err := inputfile.Read(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file %s: %w", t.CAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("TLS CA file %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	case len(t.CAPEM) > 0:
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(t.CAPEM) {
			return nil, errors.New("the inline TLS trusted certificates hold no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	switch {
	case t.CertFile == "" && t.KeyFile == "" && (len(t.CertPEM) > 0 || t.KeyPEM != ""):
		pair, err := inlinePair(t.CertPEM, []byte(t.KeyPEM.Reveal()))
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	case t.CertFile != "" && t.KeyFile == "":
		return nil, fmt.Errorf("TLS client certificate %s given without its key file", t.CertFile)
	case t.CertFile == "" && t.KeyFile != "":
		return nil, fmt.Errorf("TLS client key %s given without its certificate file", t.KeyFile)
	case t.CertFile != "":
		pair, err := keyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if t.SkipHostnameCheck && !t.InsecureSkipVerify {
		// Go checks the chain and the name together; to check only the chain,
		// its own check is turned off and the chain verified here.
		roots := cfg.RootCAs
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			return verifyChain(cs, roots)
		}
	}
	return cfg, nil
}

// tlsDialer is the Kafka client's own TLS dialing (the server name is the
// host dialled unless set) with errors that say the TLS handshake failed: a
// plaintext listener just hangs up, and "connection reset by peer" alone
// does not tell an operator to look at TLS.
func tlsDialer(cfg *tls.Config, timeout time.Duration) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c := cfg.Clone()
		if c.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, fmt.Errorf("bad broker address %q: %w", addr, err)
			}
			c.ServerName = host
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn := tls.Client(raw, c)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			var verr *tls.CertificateVerificationError
			if errors.As(err, &verr) || strings.Contains(err.Error(), "certificate") {
				return nil, err // the standard library's words are clear
			}
			return nil, fmt.Errorf("TLS handshake with %s failed (is this a TLS listener?): %w", addr, err)
		}
		return conn, nil
	}
}

func verifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("tls: the broker sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	if err != nil {
		return fmt.Errorf("tls: failed to verify certificate: %w", err)
	}
	return nil
}

// keyPair reads a client certificate and key, which may share one file (as
// in a Java client's PEM keystore). The messages never quote the files'
// contents.
func keyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := inputfile.Read(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s: %w", certFile, err)
	}
	keyPEM, err := inputfile.Read(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s: %w", keyFile, err)
	}
	if encryptedKey(keyPEM) {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s is encrypted, which txnscope does not read: "+
			"decrypt it (openssl pkcs8 -in %s -out key.pem) and keep that file private", keyFile, keyFile)
	}
	if !hasBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }) {
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s holds no PEM certificate", certFile)
	}
	if !hasBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }) {
		return tls.Certificate{}, fmt.Errorf("TLS client key %s holds no PEM private key", keyFile)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		// The standard library's messages say what is wrong (a key that does
		// not match the certificate, an unknown key type) without the key.
		return tls.Certificate{}, fmt.Errorf("TLS client certificate %s and key %s: %s", certFile, keyFile,
			strings.TrimPrefix(err.Error(), "tls: "))
	}
	return pair, nil
}

// inlinePair is keyPair for PEM text given inline.
func inlinePair(certPEM, keyPEM []byte) (tls.Certificate, error) {
	switch {
	case len(certPEM) == 0:
		return tls.Certificate{}, errors.New("an inline TLS client key is given without its certificate chain")
	case len(keyPEM) == 0:
		return tls.Certificate{}, errors.New("an inline TLS client certificate chain is given without its key")
	case encryptedKey(keyPEM):
		return tls.Certificate{}, errors.New("the inline TLS client key is encrypted, which txnscope does not read: decrypt it (openssl pkcs8)")
	case !hasBlock(certPEM, func(t string) bool { return t == "CERTIFICATE" }):
		return tls.Certificate{}, errors.New("the inline TLS client certificate chain holds no PEM certificate")
	case !hasBlock(keyPEM, func(t string) bool { return strings.HasSuffix(t, "PRIVATE KEY") }):
		return tls.Certificate{}, errors.New("the inline TLS client key holds no PEM private key")
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("the inline TLS client certificate and key: %s", strings.TrimPrefix(err.Error(), "tls: "))
	}
	return pair, nil
}

func hasBlock(data []byte, want func(string) bool) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if want(b.Type) {
			return true
		}
	}
}

// encryptedKey reports a PKCS#8 encrypted key or a legacy OpenSSL one.
func encryptedKey(data []byte) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || strings.Contains(b.Headers["Proc-Type"], "ENCRYPTED") {
			return true
		}
	}
}

// saslMechanism builds franz-go's SASL mechanism from s.
func saslMechanism(s *conn.SASL) (sasl.Mechanism, error) {
	name, err := conn.ParseMechanism(s.Mechanism)
	if err != nil {
		return nil, fmt.Errorf("unknown SASL mechanism %q: want %s", s.Mechanism, strings.Join(conn.Mechanisms(), ", "))
	}
	if name == conn.AWSMSKIAM || name == conn.OAuthBearer && s.AWS != nil {
		if s.AWS == nil {
			return nil, errors.New("SASL AWS_MSK_IAM needs its login module's options (IAMLoginModule)")
		}
		return awsMechanism(*s.AWS)
	}
	if name == conn.GSSAPI {
		if s.Kerberos == nil {
			return nil, errors.New("SASL GSSAPI needs a Kerberos login (a keytab or a ticket cache)")
		}
		return kerberosMechanism(*s.Kerberos)
	}
	pass := s.Password.Reveal()
	if name == conn.OAuthBearer && s.OAuth != nil {
		return oauthMechanism(*s.OAuth)
	}
	if name == conn.OAuthBearer {
		if pass == "" {
			return nil, errors.New("SASL OAUTHBEARER needs a token")
		}
		return oauth.Auth{Token: pass}.AsMechanism(), nil
	}
	if s.Username == "" {
		return nil, fmt.Errorf("SASL %s needs a username", name)
	}
	if pass == "" {
		return nil, fmt.Errorf("SASL %s needs a password", name)
	}
	switch name {
	case conn.Plain:
		return plain.Auth{User: s.Username, Pass: pass}.AsMechanism(), nil
	case conn.ScramSHA256:
		return scram.Auth{User: s.Username, Pass: pass}.AsSha256Mechanism(), nil
	default:
		return scram.Auth{User: s.Username, Pass: pass}.AsSha512Mechanism(), nil
	}
}

// oauthMechanism is OAUTHBEARER with tokens from o's endpoint: one source
// for every connection of the client, asked again at each authentication,
// so that a re-authentication (KIP-368) after the token's refresh time
// carries a new one.
func oauthMechanism(o conn.OAuth) (sasl.Mechanism, error) {
	src, err := oauthtoken.New(o)
	if err != nil {
		return nil, err
	}
	ext := maps.Clone(o.Extensions)
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		tok, err := src.Token(ctx)
		return oauth.Auth{Token: tok, Extensions: ext}, err
	}), nil
}
