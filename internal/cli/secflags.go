package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/clientprops"
	"github.com/txnscope/txnscope/internal/inputfile"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// passwordEnv holds the SASL password (or OAUTHBEARER token) when no
// --sasl-password-file is given. There is no flag for it: argv is visible to
// every user of the machine.
const passwordEnv = "TXNSCOPE_SASL_PASSWORD"

// secFlags are the TLS and SASL flags as given.
type secFlags struct {
	tls              bool
	tlsCA            string
	tlsCert, tlsKey  string
	tlsServerName    string
	tlsInsecure      bool
	saslMechanism    string
	saslUsername     string
	saslPasswordFile string
	commandConfig    string
}

var (
	tlsFlagNames  = []string{"tls", "tls-ca", "tls-cert", "tls-key", "tls-server-name", "tls-insecure-skip-verify"}
	saslFlagNames = []string{"sasl-mechanism", "sasl-username", "sasl-password-file"}
)

func secFlagSet(fs *pflag.FlagSet, s *secFlags) {
	fs.BoolVar(&s.tls, "tls", false, "connect with TLS (implied by every --tls-* flag)")
	fs.StringVar(&s.tlsCA, "tls-ca", "", "PEM `FILE` of the CA certificate(s) that signed the brokers' certificates (default: the system roots)")
	fs.StringVar(&s.tlsCert, "tls-cert", "", "PEM `FILE` of the client certificate, for mutual TLS (may hold the key too)")
	fs.StringVar(&s.tlsKey, "tls-key", "", "PEM `FILE` of --tls-cert's unencrypted private key")
	fs.StringVar(&s.tlsServerName, "tls-server-name", "", "`NAME` expected in the brokers' certificates (default: the host dialled)")
	fs.BoolVar(&s.tlsInsecure, "tls-insecure-skip-verify", false, "accept any broker certificate (warned about on every run)")
	fs.StringVar(&s.saslMechanism, "sasl-mechanism", "", "SASL `MECHANISM`: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (a static token)")
	fs.StringVar(&s.saslUsername, "sasl-username", "", "SASL user `NAME` (not for OAUTHBEARER)")
	fs.StringVar(&s.saslPasswordFile, "sasl-password-file", "", "`FILE` holding the password, or the OAUTHBEARER token (a trailing newline is dropped); "+
		"else the environment variable "+passwordEnv+". There is no flag for the password itself: command lines are visible to all users")
	fs.StringVar(&s.commandConfig, "command-config", "", "a Java client .properties `FILE`, as kafka-transactions.sh takes: bootstrap.servers (unless -b), "+
		"security.protocol, sasl.mechanism, sasl.jaas.config, PEM ssl.truststore/keystore")
}

// resolveSecurity merges the command config, the flags and the environment
// (flags win over the file) into c.security; it also returns the file's
// bootstrap servers. Files are read here, so that a bad one is a usage error
// before anything connects. No message holds a secret.
func resolveSecurity(fs *pflag.FlagSet, c *config, getenv func(string) string) ([]string, error) {
	s := &c.sec
	var (
		sec  kafkaadmin.Security
		boot []string
		file clientprops.File
	)
	if fs.Changed("command-config") {
		if strings.TrimSpace(s.commandConfig) == "" {
			return nil, usagef("--command-config is empty")
		}
		var err error
		if file, err = clientprops.ParseFile(s.commandConfig); err != nil {
			return nil, usagef("--command-config %v", err)
		}
		boot, sec = file.Bootstrap, file.Security
		if perm, open := inputfile.Exposed(s.commandConfig); open && file.Secret != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("--command-config %s holds %s and %s", s.commandConfig, file.Secret, exposedNote(s.commandConfig, perm)))
		}
		// Copies: the flags below must not write into the file's values.
		if sec.TLS != nil {
			t := *sec.TLS
			sec.TLS = &t
		}
		if sec.SASL != nil {
			a := *sec.SASL
			sec.SASL = &a
		}
	}

	wantTLS := s.tls
	for _, n := range tlsFlagNames[1:] {
		wantTLS = wantTLS || fs.Changed(n)
	}
	if wantTLS && sec.TLS == nil {
		sec.TLS = &kafkaadmin.TLS{}
	}
	if t := sec.TLS; t != nil {
		if fs.Changed("tls-ca") {
			if s.tlsCA == "" {
				return nil, usagef("--tls-ca is empty")
			}
			t.CAFile, t.CAPEM = s.tlsCA, nil
		}
		switch cert, key := fs.Changed("tls-cert"), fs.Changed("tls-key"); {
		case cert && !key:
			return nil, usagef("--tls-cert needs --tls-key (both may name one file holding the key and the certificate)")
		case key && !cert:
			return nil, usagef("--tls-key needs --tls-cert")
		case cert:
			if s.tlsCert == "" || s.tlsKey == "" {
				return nil, usagef("--tls-cert and --tls-key must not be empty")
			}
			t.CertFile, t.KeyFile, t.CertPEM, t.KeyPEM = s.tlsCert, s.tlsKey, nil, ""
		}
		if fs.Changed("tls-server-name") {
			t.ServerName = s.tlsServerName
		}
		if fs.Changed("tls-insecure-skip-verify") {
			t.InsecureSkipVerify = s.tlsInsecure
		}
		if err := checkTLSFiles(fs, c, file, t); err != nil {
			return nil, err
		}
	}

	if fs.Changed("sasl-mechanism") {
		mech := strings.ToUpper(strings.TrimSpace(s.saslMechanism))
		switch mech {
		case kafkaadmin.Plain, kafkaadmin.ScramSHA256, kafkaadmin.ScramSHA512, kafkaadmin.OAuthBearer:
		case "GSSAPI":
			return nil, usagef("--sasl-mechanism GSSAPI (Kerberos) is not supported: use PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER")
		default:
			return nil, usagef("bad --sasl-mechanism %q: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", clip(s.saslMechanism))
		}
		if sec.SASL == nil {
			sec.SASL = &kafkaadmin.SASL{}
		}
		sec.SASL.Mechanism = mech
	}
	if sec.SASL == nil {
		for _, n := range saslFlagNames[1:] {
			if fs.Changed(n) {
				return nil, usagef("--%s needs --sasl-mechanism (or a --command-config with SASL)", n)
			}
		}
	} else {
		a := sec.SASL
		if fs.Changed("sasl-username") {
			a.Username = s.saslUsername
		}
		switch {
		case fs.Changed("sasl-password-file"):
			pw, err := readSecretFile(s.saslPasswordFile)
			if err != nil {
				return nil, err
			}
			a.Password = pw
			if perm, open := inputfile.Exposed(s.saslPasswordFile); open {
				c.warnings = append(c.warnings, "--sasl-password-file "+s.saslPasswordFile+" "+exposedNote(s.saslPasswordFile, perm))
			}
		case getenv(passwordEnv) != "":
			a.Password = kafkaadmin.Secret(trimNewline(getenv(passwordEnv)))
		}
		what := "password"
		if a.Mechanism == kafkaadmin.OAuthBearer {
			what = "token"
		} else if a.Username == "" {
			return nil, usagef("SASL %s needs a user name: --sasl-username (or username in the command config's sasl.jaas.config)", a.Mechanism)
		}
		if a.Password == "" {
			return nil, usagef("SASL %s needs a %s: --sasl-password-file FILE or the environment variable %s", a.Mechanism, what, passwordEnv)
		}
	}
	c.security = sec
	return boot, nil
}

// readSecretFile reads a password or token file; only a trailing newline
// is dropped (editors add one; a password may end in spaces).
func readSecretFile(path string) (kafkaadmin.Secret, error) {
	if path == "" {
		return "", usagef("--sasl-password-file is empty")
	}
	data, err := inputfile.Read(path)
	if err != nil {
		return "", usagef("--sasl-password-file %s: %v", path, err)
	}
	pw := trimNewline(string(data))
	if pw == "" {
		return "", usagef("--sasl-password-file %s is empty", path)
	}
	return kafkaadmin.Secret(pw), nil
}

// tlsFile is a file the TLS settings read, with where it was named.
type tlsFile struct {
	path, from string
	// holdsKey: other users must not read it.
	holdsKey bool
}

// checkTLSFiles refuses a TLS file that cannot be read or holds no usable
// PEM now, naming the flag or setting that named it, rather than when the
// client starts; and warns about a private key others can read.
func checkTLSFiles(fs *pflag.FlagSet, c *config, file clientprops.File, t *kafkaadmin.TLS) error {
	from := func(flag, key string) string {
		if fs.Changed(flag) {
			return "--" + flag
		}
		for _, n := range file.Named {
			if n.Key == key {
				return fmt.Sprintf("--command-config %s: line %d: %s", c.sec.commandConfig, n.Line, n.Key)
			}
		}
		return "--" + flag // not reached: a file path comes from a flag or a setting
	}
	ca := tlsFile{t.CAFile, from("tls-ca", "ssl.truststore.location"), false}
	cert := tlsFile{t.CertFile, from("tls-cert", "ssl.keystore.location"), t.CertFile == t.KeyFile}
	key := tlsFile{t.KeyFile, from("tls-key", "ssl.keystore.location"), true}
	files := []tlsFile{ca, cert}
	if key.path != cert.path {
		files = append(files, key)
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		if err := inputfile.Check(f.path); err != nil {
			return usagef("%s %s: %v", f.from, f.path, err)
		}
		if perm, open := inputfile.Exposed(f.path); open && f.holdsKey {
			c.warnings = append(c.warnings, fmt.Sprintf("%s %s holds a private key and %s", f.from, f.path, exposedNote(f.path, perm)))
		}
	}

	// The contents, one part at a time so that a message names its flag.
	if err := (&kafkaadmin.TLS{CAFile: t.CAFile}).Check(); err != nil {
		return usagef("%s: %v", ca.from, err)
	}
	if err := (&kafkaadmin.TLS{CertFile: t.CertFile, KeyFile: t.KeyFile}).Check(); err != nil {
		names := cert.from
		if key.from != cert.from {
			names += ", " + key.from
		}
		return usagef("%s: %v", names, err)
	}
	// What is left is PEM text inline in the properties file.
	if err := t.Check(); err != nil {
		return usagef("--command-config %s: %v", c.sec.commandConfig, err)
	}
	return nil
}

// exposedNote says, as ssh does of a private key, that a file holding a
// secret is readable by others: a warning, since txnscope cannot know who
// those others are.
func exposedNote(path string, perm os.FileMode) string {
	return fmt.Sprintf("is readable by other users (mode %04o): chmod 600 %s", perm, path)
}

func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// insecureWarning is shown while the brokers' certificates go unchecked.
const insecureWarning = "TLS certificate NOT verified (--tls-insecure-skip-verify): anyone on the path can read and change the traffic"

func (c config) insecure() bool {
	return c.security.TLS != nil && c.security.TLS.InsecureSkipVerify
}
