package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/txnscope/txnscope/internal/clientprops"
	"github.com/txnscope/txnscope/internal/conn"
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
	fs.StringVar(&s.saslMechanism, "sasl-mechanism", "", "SASL `MECHANISM`: "+conn.MechanismChoices+" (a static token; a token endpoint from --command-config)")
	fs.StringVar(&s.saslUsername, "sasl-username", "", "SASL user `NAME` (not for OAUTHBEARER)")
	fs.StringVar(&s.saslPasswordFile, "sasl-password-file", "", "`FILE` holding the password, or the OAUTHBEARER token (a trailing newline is dropped); "+
		"else the environment variable "+passwordEnv+". There is no flag for the password itself: command lines are visible to all users")
	fs.StringVar(&s.commandConfig, "command-config", "", "a Java client .properties `FILE`, as kafka-transactions.sh takes: bootstrap.servers (unless -b), "+
		"security.protocol, sasl.mechanism, sasl.jaas.config, OAuth client credentials, PEM ssl.truststore/keystore")
}

// resolveSecurity merges the command config, the flags and the environment
// (flags win over the file) into c.security; it also returns the file's
// bootstrap servers. Files are read here, so that a bad one is a usage error
// before anything connects. No message holds a secret.
func resolveSecurity(fs *pflag.FlagSet, c *config, getenv func(string) string) ([]string, error) {
	var file clientprops.File
	var err error
	switch {
	case fs.Changed("command-config"):
		file, err = readCommandConfig(c)
	case c.ctx.props != nil:
		file, err = inlineProperties(c)
	}
	if err != nil {
		return nil, err
	}
	// A copy: the flags below must not write into the file's values.
	sec := file.Security.Clone()
	if err := tlsFlags(fs, c, file, &sec); err != nil {
		return nil, err
	}
	if err := saslFlags(fs, c, &sec, getenv); err != nil {
		return nil, err
	}
	c.security = sec
	return file.Bootstrap, nil
}

// readCommandConfig parses --command-config, warning when others can read
// the credential it holds.
func readCommandConfig(c *config) (clientprops.File, error) {
	path := c.sec.commandConfig
	if strings.TrimSpace(path) == "" {
		return clientprops.File{}, usagef("--command-config is empty")
	}
	file, err := clientprops.ParseFile(path)
	if err != nil {
		return clientprops.File{}, usagef("--command-config %v", err)
	}
	if perm, open := inputfile.Exposed(path); open && file.Secret != "" {
		c.warnings = append(c.warnings, fmt.Sprintf("--command-config %s holds %s and %s", path, file.Secret, exposedNote(path, perm)))
	}
	if err := checkKeytab(c, file, "--command-config "+path); err != nil {
		return clientprops.File{}, err
	}
	return file, nil
}

// checkKeytab refuses a keytab the properties name that cannot be read,
// and warns about one others can read.
func checkKeytab(c *config, file clientprops.File, where string) error {
	if sa := file.Security.SASL; sa != nil && sa.Kerberos != nil && sa.Kerberos.Keytab != "" {
		kt := sa.Kerberos.Keytab
		if err := inputfile.Check(kt); err != nil {
			return usagef("%s: %s's keyTab %s: %v", where, sa.Kerberos.Origin, kt, err)
		}
		if perm, open := inputfile.Exposed(kt); open {
			c.warnings = append(c.warnings, fmt.Sprintf("the keyTab %s (%s) holds Kerberos keys and %s", kt, sa.Kerberos.Origin, exposedNote(kt, perm)))
		}
	}
	return nil
}

// inlineProperties reads the client properties a context gives inline, as
// a --command-config file's.
func inlineProperties(c *config) (clientprops.File, error) {
	file, err := clientprops.FromEntriesFile(c.ctx.props)
	if err != nil {
		return clientprops.File{}, usagef("%s: %v", c.ctx.propsFrom, err)
	}
	if err := checkKeytab(c, file, c.ctx.propsFrom); err != nil {
		return clientprops.File{}, err
	}
	return file, nil
}

// propsWhere names the properties in messages: the file, or the context.
func (c *config) propsWhere() string {
	if c.sec.commandConfig == "" && c.ctx.propsFrom != "" {
		return c.ctx.propsFrom
	}
	return "--command-config " + c.sec.commandConfig
}

// tlsFlags lays the TLS flags over sec: any of them turns TLS on.
func tlsFlags(fs *pflag.FlagSet, c *config, file clientprops.File, sec *conn.Security) error {
	s := &c.sec
	wantTLS := s.tls
	for _, n := range tlsFlagNames[1:] {
		wantTLS = wantTLS || fs.Changed(n)
	}
	if wantTLS && sec.TLS == nil {
		sec.TLS = &conn.TLS{}
	}
	t := sec.TLS
	if t == nil {
		return nil
	}
	if fs.Changed("tls-ca") {
		if s.tlsCA == "" {
			return usagef("--tls-ca is empty")
		}
		t.CAFile, t.CAPEM = s.tlsCA, nil
	}
	switch cert, key := fs.Changed("tls-cert"), fs.Changed("tls-key"); {
	case cert && !key:
		return usagef("--tls-cert needs --tls-key (both may name one file holding the key and the certificate)")
	case key && !cert:
		return usagef("--tls-key needs --tls-cert")
	case cert:
		if s.tlsCert == "" || s.tlsKey == "" {
			return usagef("--tls-cert and --tls-key must not be empty")
		}
		t.CertFile, t.KeyFile, t.CertPEM, t.KeyPEM = s.tlsCert, s.tlsKey, nil, ""
	}
	if fs.Changed("tls-server-name") {
		t.ServerName = s.tlsServerName
	}
	if fs.Changed("tls-insecure-skip-verify") {
		t.InsecureSkipVerify = s.tlsInsecure
	}
	return checkTLSFiles(fs, c, file, t)
}

// saslFlags lays the SASL flags over sec: --sasl-mechanism turns SASL on,
// the credentials need it on.
func saslFlags(fs *pflag.FlagSet, c *config, sec *conn.Security, getenv func(string) string) error {
	s := &c.sec
	if fs.Changed("sasl-mechanism") {
		mech, err := conn.ParseMechanism(s.saslMechanism)
		if err != nil {
			return usagef("bad --sasl-mechanism %q: want %s", clip(s.saslMechanism), conn.MechanismChoices)
		}
		if sec.SASL == nil {
			sec.SASL = &conn.SASL{}
		}
		sec.SASL.Mechanism = mech
	}
	if sec.SASL == nil {
		for _, n := range saslFlagNames[1:] {
			if fs.Changed(n) {
				return usagef("--%s needs --sasl-mechanism (or a --command-config with SASL)", n)
			}
		}
		return nil
	}
	return saslCredentials(fs, c, sec.SASL, getenv)
}

// saslCredentials lays the user name and the password (a file, else the
// environment) over a's, and refuses a mechanism left without them.
func saslCredentials(fs *pflag.FlagSet, c *config, a *conn.SASL, getenv func(string) string) error {
	s := &c.sec
	if fs.Changed("sasl-username") {
		a.Username = s.saslUsername
	}
	if a.Mechanism != conn.OAuthBearer || fs.Changed("sasl-password-file") {
		// A token given on the command line wins over the file's endpoint.
		a.OAuth = nil
	}
	if a.Mechanism != conn.AWSMSKIAM && (a.Mechanism != conn.OAuthBearer || fs.Changed("sasl-password-file")) {
		a.AWS = nil
	}
	if a.AWS != nil || a.Mechanism == conn.AWSMSKIAM {
		if a.AWS == nil {
			return usagef("SASL AWS_MSK_IAM needs --command-config with sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required; " +
				"and sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler")
		}
		for _, n := range saslFlagNames[1:] {
			if fs.Changed(n) {
				return usagef("--%s does not go with Amazon MSK IAM: its credentials come from the AWS SDK's chain", n)
			}
		}
		return nil
	}
	if a.Mechanism != conn.GSSAPI {
		a.Kerberos = nil
	} else if a.Kerberos == nil {
		return usagef("SASL GSSAPI (Kerberos) needs --command-config with sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule " +
			"(useKeyTab=true, keyTab and principal, or useTicketCache=true) and sasl.kerberos.service.name")
	} else {
		for _, n := range saslFlagNames[1:] {
			if fs.Changed(n) {
				return usagef("--%s does not go with GSSAPI: Kerberos logs in with the keytab or ticket cache of --command-config", n)
			}
		}
		return nil
	}
	if a.OAuth != nil {
		return nil // tokens come from the endpoint; the environment's password is not one
	}
	switch {
	case fs.Changed("sasl-password-file"):
		pw, err := readSecretFile(s.saslPasswordFile)
		if err != nil {
			return err
		}
		a.Password = pw
		if perm, open := inputfile.Exposed(s.saslPasswordFile); open {
			c.warnings = append(c.warnings, "--sasl-password-file "+s.saslPasswordFile+" "+exposedNote(s.saslPasswordFile, perm))
		}
	case getenv(passwordEnv) != "":
		a.Password = conn.Secret(trimNewline(getenv(passwordEnv)))
	}
	what := "password"
	if a.Mechanism == conn.OAuthBearer {
		what = "token"
	} else if a.Username == "" {
		return usagef("SASL %s needs a user name: --sasl-username (or username in the command config's sasl.jaas.config)", a.Mechanism)
	}
	if a.Password == "" {
		return usagef("SASL %s needs a %s: --sasl-password-file FILE or the environment variable %s", a.Mechanism, what, passwordEnv)
	}
	return nil
}

// bootstrapFlag is --bootstrap-server's list of servers.
func bootstrapFlag(fs *pflag.FlagSet) ([]string, error) {
	raw, _ := fs.GetString("bootstrap-server")
	seeds, err := conn.ParseBootstrap(raw)
	var bad *conn.AddressError
	switch {
	case errors.As(err, &bad):
		return nil, usagef("bad --bootstrap-server %q: a host:port may not contain spaces", clip(bad.Addr))
	case err != nil:
		return nil, usagef("--bootstrap-server is empty: give at least one host:port")
	}
	return seeds, nil
}

// readSecretFile reads a password or token file; only a trailing newline
// is dropped (editors add one; a password may end in spaces).
func readSecretFile(path string) (conn.Secret, error) {
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
	return conn.Secret(pw), nil
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
func checkTLSFiles(fs *pflag.FlagSet, c *config, file clientprops.File, t *conn.TLS) error {
	from := func(flag, key string) string {
		if fs.Changed(flag) {
			return "--" + flag
		}
		for _, n := range file.Named {
			if n.Key == key {
				return fmt.Sprintf("%s: line %d: %s", c.propsWhere(), n.Line, n.Key)
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
	if err := kafkaadmin.CheckTLS(&conn.TLS{CAFile: t.CAFile}); err != nil {
		return usagef("%s: %v", ca.from, err)
	}
	if err := kafkaadmin.CheckTLS(&conn.TLS{CertFile: t.CertFile, KeyFile: t.KeyFile}); err != nil {
		names := cert.from
		if key.from != cert.from {
			names += ", " + key.from
		}
		return usagef("%s: %v", names, err)
	}
	// What is left is PEM text inline in the properties file.
	if err := kafkaadmin.CheckTLS(t); err != nil {
		return usagef("%s: %v", c.propsWhere(), err)
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
	return c.security.Insecure()
}
