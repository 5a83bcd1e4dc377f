package clientprops

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/inputfile"
)

// Config is what a client properties file says about reaching the cluster.
type Config struct {
	// Bootstrap is bootstrap.servers, nil when the file does not set it.
	Bootstrap []string
	// Security is nil-TLS and nil-SASL for PLAINTEXT. A SASL mechanism may
	// come without credentials (no sasl.jaas.config, or OAUTHBEARER's login
	// module): the command line then has to supply them.
	Security conn.Security
}

// File is a properties file as ParseFile read it: what it says, plus what
// the command line needs to name its settings in messages and to warn about
// its permissions.
type File struct {
	Config
	// Named lists the files Config reads (a PEM truststore or keystore),
	// each with the setting and line that named it.
	Named []Named
	// Secret is the first setting holding a credential, as "sasl.jaas.config
	// (line 4)"; empty when none does. Such a file should be private.
	Secret string
}

// Named is a file a setting names.
type Named struct {
	Key  string
	Line int
	Path string
}

// ParseFile reads a properties file (a regular file of at most a few MiB:
// see internal/inputfile); its errors start with the path.
func ParseFile(path string) (File, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	entries, err := Parse(string(data))
	if err == nil {
		var f File
		if f, err = FromEntriesFile(entries); err == nil {
			return f, nil
		}
	}
	return File{}, fmt.Errorf("%s: %w", path, err)
}

// FromEntriesFile maps entries read from elsewhere (a config file's
// context) as ParseFile maps a file's.
func FromEntriesFile(entries []Entry) (File, error) {
	c, err := FromEntries(entries)
	if err != nil {
		return File{}, err
	}
	return File{Config: c, Named: named(entries, c), Secret: secretIn(entries)}, nil
}

// named finds the settings c's file paths came from (the last of a key
// wins, as in FromEntries).
func named(entries []Entry, c Config) []Named {
	t := c.Security.TLS
	if t == nil {
		return nil
	}
	last := map[string]Entry{}
	for _, e := range entries {
		last[e.Key] = e
	}
	var out []Named
	for _, f := range []struct{ key, path string }{{"ssl.truststore.location", t.CAFile}, {"ssl.keystore.location", t.KeyFile}} {
		if e, ok := last[f.key]; ok && f.path != "" {
			out = append(out, Named{Key: f.key, Line: e.Line, Path: f.path})
		}
	}
	return out
}

// secretIn names the first setting that holds a credential, whether or not
// txnscope uses it: the file on disk holds it either way. A truststore's
// password is left out: it guards public certificates.
func secretIn(entries []Entry) string {
	for _, e := range entries {
		if SecretKey(e.Key) {
			return fmt.Sprintf("%s (line %d)", e.Key, e.Line)
		}
	}
	return ""
}

// SecretKey reports whether the setting k holds a credential.
func SecretKey(k string) bool {
	switch {
	case k == "sasl.jaas.config", k == "ssl.keystore.key", k == "ssl.key.password", k == "ssl.keystore.password",
		strings.Contains(k, "secret"):
		return true
	}
	return false
}

// ParseText parses properties text and maps it.
func ParseText(text string) (Config, error) {
	entries, err := Parse(text)
	if err != nil {
		return Config{}, err
	}
	return FromEntries(entries)
}

// Security protocols, with Kafka's names.
const (
	protoPlaintext     = "PLAINTEXT"
	protoSSL           = "SSL"
	protoSASLPlaintext = "SASL_PLAINTEXT"
	protoSASLSSL       = "SASL_SSL"
)

// Conversions offered when a Java keystore or truststore is found.
const (
	truststoreHint = "convert it to PEM (keytool -exportcert -rfc -keystore TRUSTSTORE -alias CAROOT -file ca.pem) " +
		"and set ssl.truststore.type=PEM and ssl.truststore.location=ca.pem, or pass --tls-ca ca.pem"
	keystoreHint = "convert it to PEM (keytool -importkeystore -srckeystore KEYSTORE -destkeystore client.p12 " +
		"-deststoretype PKCS12, then openssl pkcs12 -in client.p12 -nodes -out client.pem) " +
		"and set ssl.keystore.type=PEM and ssl.keystore.location=client.pem, or pass --tls-cert client.pem --tls-key client.pem"
	tokenHint = "pass the token itself with --sasl-password-file FILE or TXNSCOPE_SASL_PASSWORD"
)

// unsupported tells whether key changes how the Java client connects in a
// way txnscope cannot follow, under which protocols ("sasl" or "ssl"), and
// what to do instead.
func unsupported(key string) (applies, why string, ok bool) {
	switch key {
	case "sasl.login.class":
		return "sasl", "custom login classes are not supported: use PLAIN, SCRAM, OAUTHBEARER, GSSAPI or AWS_MSK_IAM", true
	case "sasl.oauthbearer.assertion.file", "sasl.oauthbearer.assertion.algorithm", "sasl.oauthbearer.assertion.private.key.file",
		"sasl.oauthbearer.assertion.template.file", "sasl.oauthbearer.assertion.claim.iss":
		return "sasl", "the JWT bearer grant is not supported: use the client credentials grant (clientId and clientSecret)", true
	case "sasl.oauthbearer.jwt.retriever.class":
		return "sasl", "custom token retrievers are not supported: leave it out (txnscope reads the token endpoint as the default retriever does)", true
	case "ssl.engine.factory.class":
		return "ssl", "custom SSL engines are not supported: use PEM files (ssl.truststore.type=PEM, ssl.keystore.type=PEM)", true
	}
	return "", "", false
}

// FromEntries maps a Java client's settings to txnscope's. Settings txnscope
// has no use for (client.id, request.timeout.ms, ...) are ignored; settings
// it cannot honour are errors naming the key, its line and the alternative.
func FromEntries(entries []Entry) (Config, error) {
	m := make(map[string]Entry, len(entries))
	for _, e := range entries {
		m[e.Key] = e // the last one wins, as in Java
	}
	var c Config

	if e, ok := m["bootstrap.servers"]; ok {
		// Not checked for white space here: -b may replace them, and the
		// Kafka client refuses a bad one when it starts.
		if c.Bootstrap = conn.SplitBootstrap(e.Value); len(c.Bootstrap) == 0 {
			return Config{}, fmt.Errorf("line %d: bootstrap.servers is empty", e.Line)
		}
	}

	proto := protoPlaintext
	protoLine := 0
	if e, ok := m["security.protocol"]; ok {
		proto = strings.ToUpper(strings.TrimSpace(e.Value))
		protoLine = e.Line
		switch proto {
		case protoPlaintext, protoSSL, protoSASLPlaintext, protoSASLSSL:
		default:
			return Config{}, fmt.Errorf("line %d: security.protocol=%s is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", e.Line, short(e.Value))
		}
	}
	useTLS := proto == protoSSL || proto == protoSASLSSL
	useSASL := proto == protoSASLPlaintext || proto == protoSASLSSL

	for _, e := range entries {
		applies, why, ok := unsupported(e.Key)
		if !ok || (applies == "sasl" && !useSASL) || (applies == "ssl" && !useTLS) {
			continue
		}
		return Config{}, fmt.Errorf("line %d: %s: %s", e.Line, e.Key, why)
	}

	if useTLS {
		t, err := tlsFrom(m)
		if err != nil {
			return Config{}, err
		}
		c.Security.TLS = t
	}
	if useSASL {
		s, err := saslFrom(m, protoLine, c.Security.TLS)
		if err != nil {
			return Config{}, err
		}
		c.Security.SASL = s
	}
	return c, nil
}

func tlsFrom(m map[string]Entry) (*conn.TLS, error) {
	t := &conn.TLS{}
	if err := truststoreFrom(m, t); err != nil {
		return nil, err
	}
	if err := keystoreFrom(m, t); err != nil {
		return nil, err
	}
	if e, ok := m["ssl.endpoint.identification.algorithm"]; ok {
		switch strings.ToLower(strings.TrimSpace(e.Value)) {
		case "https":
		case "":
			// Java then checks the chain but not the name; so does txnscope.
			t.SkipHostnameCheck = true
		default:
			return nil, fmt.Errorf("line %d: ssl.endpoint.identification.algorithm=%s is not supported: use https or leave it empty", e.Line, short(e.Value))
		}
	}
	return t, nil
}

// pemStore refuses a truststore or keystore (kind) that is not PEM, naming
// its type setting or else first, the setting that gave the store.
func pemStore(m map[string]Entry, kind string, first Entry, hint string) error {
	e, given := m["ssl."+kind+".type"]
	if !given {
		// Java's default store type.
		return fmt.Errorf("line %d: a %s without ssl.%s.type is a JKS store, which is not supported: %s", first.Line, kind, kind, hint)
	}
	if typ := strings.ToUpper(strings.TrimSpace(e.Value)); typ != "PEM" {
		return fmt.Errorf("line %d: ssl.%s.type=%s is not supported: %s", e.Line, kind, short(typ), hint)
	}
	return nil
}

// truststoreFrom sets t's CA: a PEM file or PEM text inline.
func truststoreFrom(m map[string]Entry, t *conn.TLS) error {
	loc, hasLoc := m["ssl.truststore.location"]
	inline, hasInline := m["ssl.truststore.certificates"]
	if !hasLoc && !hasInline {
		return nil
	}
	first := loc
	if !hasLoc {
		first = inline
	}
	if err := pemStore(m, "truststore", first, truststoreHint); err != nil {
		return err
	}
	if hasLoc && hasInline {
		return fmt.Errorf("line %d: give ssl.truststore.location or ssl.truststore.certificates, not both", inline.Line)
	}
	if hasLoc {
		if t.CAFile = strings.TrimSpace(loc.Value); t.CAFile == "" {
			return fmt.Errorf("line %d: ssl.truststore.location is empty", loc.Line)
		}
	} else {
		t.CAPEM = []byte(inline.Value)
	}
	return nil
}

// keystoreFrom sets t's client certificate and key: one PEM file holding
// both, or both as PEM text inline.
func keystoreFrom(m map[string]Entry, t *conn.TLS) error {
	kloc, hasKloc := m["ssl.keystore.location"]
	ikey, hasIkey := m["ssl.keystore.key"]
	ichain, hasIchain := m["ssl.keystore.certificate.chain"]
	if !hasKloc && !hasIkey && !hasIchain {
		return nil
	}
	first := kloc
	if !hasKloc {
		first = ikey
		if !hasIkey {
			first = ichain
		}
	}
	if err := pemStore(m, "keystore", first, keystoreHint); err != nil {
		return err
	}
	if pw, ok := m["ssl.key.password"]; ok {
		return fmt.Errorf("line %d: ssl.key.password is not supported: txnscope reads unencrypted keys only; "+
			"decrypt the key (openssl pkcs8 -in KEY -out key.pem), keep that file private, and drop ssl.key.password", pw.Line)
	}
	switch {
	case hasKloc && (hasIkey || hasIchain):
		return fmt.Errorf("line %d: give ssl.keystore.location or ssl.keystore.key with ssl.keystore.certificate.chain, not both", kloc.Line)
	case hasKloc:
		p := strings.TrimSpace(kloc.Value)
		if p == "" {
			return fmt.Errorf("line %d: ssl.keystore.location is empty", kloc.Line)
		}
		// Kafka's PEM keystore is one file with the key and its chain.
		t.CertFile, t.KeyFile = p, p
	case !hasIkey:
		return fmt.Errorf("line %d: ssl.keystore.certificate.chain needs ssl.keystore.key", ichain.Line)
	case !hasIchain:
		return fmt.Errorf("line %d: ssl.keystore.key needs ssl.keystore.certificate.chain", ikey.Line)
	default:
		t.CertPEM, t.KeyPEM = []byte(ichain.Value), conn.Secret(ikey.Value)
	}
	return nil
}

func saslFrom(m map[string]Entry, protoLine int, tls *conn.TLS) (*conn.SASL, error) {
	s := &conn.SASL{Mechanism: conn.GSSAPI} // Java's default
	mechLine := protoLine
	if me, ok := m["sasl.mechanism"]; ok {
		var err error
		if s.Mechanism, err = conn.ParseMechanism(me.Value); err != nil {
			return nil, fmt.Errorf("line %d: sasl.mechanism=%s is not supported: use %s", me.Line, short(me.Value), conn.MechanismChoices)
		}
		mechLine = me.Line
	}
	loginHandler := strings.TrimSpace(m[handlerKey].Value)
	if s.Mechanism == conn.AWSMSKIAM || s.Mechanism == conn.OAuthBearer && loginHandler == mskOAuthHandler {
		a, err := awsFrom(m, s.Mechanism, mechLine)
		if err != nil {
			return nil, err
		}
		s.AWS = a
		return s, nil
	}
	if h, ok := m[clientHandlerKey]; ok {
		return nil, fmt.Errorf("line %d: %s=%s: custom SASL callbacks are not supported (only Amazon MSK IAM's)", h.Line, clientHandlerKey, short(h.Value))
	}
	if s.Mechanism == conn.GSSAPI {
		k, err := kerberosFrom(m, mechLine)
		if err != nil {
			return nil, err
		}
		s.Kerberos = k
		return s, nil
	}

	if h, ok := m[handlerKey]; ok && s.Mechanism != conn.OAuthBearer {
		return nil, fmt.Errorf("line %d: %s: custom login callbacks are not supported with sasl.mechanism=%s", h.Line, handlerKey, s.Mechanism)
	}
	je, ok := m["sasl.jaas.config"]
	if !ok {
		if h, ok := m[handlerKey]; ok {
			return nil, fmt.Errorf("line %d: %s needs sasl.jaas.config=%s required clientId=\"...\" clientSecret=\"...\";", h.Line, handlerKey, oauthModule)
		}
		return s, nil
	}
	j, err := parseJAAS(je.Value)
	if err != nil {
		return nil, fmt.Errorf("line %d: sasl.jaas.config cannot be read: %v", je.Line, err)
	}
	module := j.module[strings.LastIndex(j.module, ".")+1:]
	isOAuth := s.Mechanism == conn.OAuthBearer
	switch {
	case j.module == plainModule || j.module == scramModule:
		if isOAuth {
			return nil, fmt.Errorf("line %d: sasl.jaas.config uses %s, which does not go with sasl.mechanism=OAUTHBEARER", je.Line, module)
		}
		if v, ok := j.options["tokenauth"]; ok && strings.EqualFold(v, "true") {
			return nil, fmt.Errorf("line %d: sasl.jaas.config's tokenauth (delegation tokens) is not supported: use a SCRAM user", je.Line)
		}
		s.Username = j.options["username"]
		s.Password = conn.Secret(j.options["password"])
		if s.Username == "" || s.Password == "" {
			return nil, fmt.Errorf("line %d: sasl.jaas.config's %s needs username=\"...\" and password=\"...\"", je.Line, module)
		}
	case j.module == oauthModule:
		if !isOAuth {
			return nil, fmt.Errorf("line %d: sasl.jaas.config uses OAuthBearerLoginModule, which does not go with sasl.mechanism=%s", je.Line, s.Mechanism)
		}
		// Without the login callback handler its options describe an
		// unsecured development token: the token then comes from the
		// command line.
		if s.OAuth, err = oauthFrom(m, j, je, tls); err != nil {
			return nil, err
		}
	case strings.HasSuffix(j.module, kerberosHint):
		return nil, fmt.Errorf("line %d: sasl.jaas.config uses Kerberos (Krb5LoginModule), which goes with sasl.mechanism=GSSAPI, not %s", je.Line, s.Mechanism)
	default:
		return nil, fmt.Errorf("line %d: sasl.jaas.config's login module %s is not supported: use PlainLoginModule or ScramLoginModule", je.Line, short(module))
	}
	return s, nil
}

// short keeps a non-secret value quoted in a message to one short line.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	if s == "" {
		return `""`
	}
	return s
}
