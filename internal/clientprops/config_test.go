package clientprops

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
)

const secret = "s3cr3t-Value-9f2"

const (
	oauthHandler  = "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
	oauthEndpoint = "sasl.oauthbearer.token.endpoint.url=https://idp.example/realms/kafka/protocol/openid-connect/token"
	oauthJAAS     = "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"txnscope\" clientSecret=\"" + secret + "\" scope=\"kafka\";"
)

func TestFromProperties(t *testing.T) {
	jaasPlain := `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="KEY123" password="` + secret + `";`
	for _, c := range []struct {
		name, text string
		want       Config
	}{
		{"nothing", "client.id=ops\nrequest.timeout.ms=30000\n", Config{}},
		{"bootstrap only", "bootstrap.servers = b1:9092, b2:9092 ,\n", Config{Bootstrap: []string{"b1:9092", "b2:9092"}}},
		{"plaintext ignores ssl and sasl keys", "security.protocol=PLAINTEXT\nssl.truststore.location=/x.jks\nsasl.mechanism=GSSAPI\n", Config{}},
		{"Confluent Cloud style", strings.Join([]string{
			"bootstrap.servers=pkc-123.europe-west1.gcp.confluent.cloud:9092",
			"security.protocol=SASL_SSL",
			"sasl.mechanism=PLAIN",
			jaasPlain,
			"client.dns.lookup=use_all_dns_ips",
			"session.timeout.ms=45000",
			"acks=all",
		}, "\n"), Config{
			Bootstrap: []string{"pkc-123.europe-west1.gcp.confluent.cloud:9092"},
			Security: conn.Security{
				TLS:  &conn.TLS{},
				SASL: &conn.SASL{Mechanism: "PLAIN", Username: "KEY123", Password: secret},
			},
		}},
		{"SCRAM over TLS with a private CA and mutual TLS", strings.Join([]string{
			"security.protocol=sasl_ssl",
			"sasl.mechanism=SCRAM-SHA-512",
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \`,
			`    username="txnscope" \`,
			`    password="` + secret + `";`,
			"ssl.truststore.type=PEM",
			"ssl.truststore.location=/etc/kafka/ca.pem",
			"ssl.keystore.type=PEM",
			"ssl.keystore.location=/etc/kafka/client.pem",
			"ssl.endpoint.identification.algorithm=",
		}, "\n"), Config{Security: conn.Security{
			TLS:  &conn.TLS{CAFile: "/etc/kafka/ca.pem", CertFile: "/etc/kafka/client.pem", KeyFile: "/etc/kafka/client.pem", SkipHostnameCheck: true},
			SASL: &conn.SASL{Mechanism: "SCRAM-SHA-512", Username: "txnscope", Password: secret},
		}}},
		{"SSL only, hostname checked", "security.protocol=SSL\nssl.truststore.type=pem\nssl.truststore.location=ca.pem\nssl.endpoint.identification.algorithm=HTTPS\n",
			Config{Security: conn.Security{TLS: &conn.TLS{CAFile: "ca.pem"}}}},
		{"SSL with a JKS type but no truststore: the system roots", "security.protocol=SSL\nssl.truststore.type=JKS\n",
			Config{Security: conn.Security{TLS: &conn.TLS{}}}},
		{"inline PEM", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\n\\\n  MIIB\\n\\\n  -----END CERTIFICATE-----\n" +
			"ssl.keystore.type=PEM\nssl.keystore.certificate.chain=CHAIN\nssl.keystore.key=" + secret + "\n",
			Config{Security: conn.Security{TLS: &conn.TLS{
				CAPEM:   []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"),
				CertPEM: []byte("CHAIN"), KeyPEM: secret,
			}}}},
		{"SASL without credentials: from the command line", "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n",
			Config{Security: conn.Security{SASL: &conn.SASL{Mechanism: "SCRAM-SHA-256"}}}},
		{"OAUTHBEARER login module: the token from the command line", "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n" +
			"sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"me\";\n",
			Config{Security: conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "OAUTHBEARER"}}}},
		{"OAuth client credentials (Keycloak, Strimzi)", strings.Join([]string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER",
			"ssl.truststore.type=PEM", "ssl.truststore.location=ca.pem", oauthHandler, oauthEndpoint, oauthJAAS}, "\n"),
			Config{Security: conn.Security{TLS: &conn.TLS{CAFile: "ca.pem"}, SASL: &conn.SASL{Mechanism: "OAUTHBEARER", OAuth: withOAuth(func(o *conn.OAuth) {
				o.TokenURL, o.ClientID, o.ClientSecret, o.Scope = "https://idp.example/realms/kafka/protocol/openid-connect/token", "txnscope", secret, "kafka"
				o.CAFile, o.Origin, o.SecretOrigin = "ca.pem", "sasl.oauthbearer.token.endpoint.url (line 6)", "sasl.jaas.config's clientSecret (line 7)"
			})}}}},
		{"OAuth: Kafka 4.1 properties over the JAAS options; timings; extensions; its own truststore", strings.Join([]string{"security.protocol=SASL_PLAINTEXT",
			"sasl.mechanism=OAUTHBEARER", oauthHandler, "sasl.oauthbearer.token.endpoint.url=http://127.0.0.1:4444/oauth2/token",
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="old" clientSecret="old" ` +
				`extension_logicalCluster="lkc-1" audience="kafka" ssl.truststore.type="PEM" ssl.truststore.location="/idp-ca.pem";`,
			"sasl.oauthbearer.client.credentials.client.id=new", "sasl.oauthbearer.client.credentials.client.secret=" + secret, "sasl.oauthbearer.scope=a b",
			"sasl.login.refresh.window.factor=0.5", "sasl.login.refresh.window.jitter=0", "sasl.login.refresh.min.period.seconds=0",
			"sasl.login.refresh.buffer.seconds=10", "sasl.login.retry.backoff.ms=50", "sasl.login.retry.backoff.max.ms=2000",
			"sasl.login.connect.timeout.ms=3000", "sasl.login.read.timeout.ms=4000", "sasl.oauthbearer.sub.claim.name=client_id",
			"sasl.oauthbearer.clock.skew.seconds=5", "sasl.oauthbearer.header.urlencode=TRUE"}, "\n"),
			Config{Security: conn.Security{SASL: &conn.SASL{Mechanism: "OAUTHBEARER", OAuth: withOAuth(func(o *conn.OAuth) {
				o.TokenURL, o.ClientID, o.ClientSecret, o.Scope, o.Audience = "http://127.0.0.1:4444/oauth2/token", "new", secret, "a b", "kafka"
				o.Extensions, o.CAFile, o.URLEncodeHeader = map[string]string{"logicalCluster": "lkc-1"}, "/idp-ca.pem", true
				o.WindowFactor, o.WindowJitter, o.MinPeriod, o.Buffer = 0.5, 0, 0, 10*time.Second
				o.Backoff, o.BackoffMax, o.ConnectTimeout, o.ReadTimeout = 50*time.Millisecond, 2*time.Second, 3*time.Second, 4*time.Second
				o.SubClaim, o.ClockSkew = "client_id", 5*time.Second
				o.Origin, o.SecretOrigin = "sasl.oauthbearer.token.endpoint.url (line 4)", "sasl.oauthbearer.client.credentials.client.secret (line 7)"
			})}}}},
		{"OAuth: a file holding the token", strings.Join([]string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthHandler,
			"sasl.oauthbearer.token.endpoint.url=file:/var/run/secrets/token", "sasl.jaas.config=" + oauthModule + " required;"}, "\n"),
			Config{Security: conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "OAUTHBEARER", OAuth: withOAuth(func(o *conn.OAuth) {
				o.TokenURL, o.Origin = "file:/var/run/secrets/token", "sasl.oauthbearer.token.endpoint.url (line 4)"
			})}}}},
		{"Kerberos with a keytab", strings.Join([]string{"security.protocol=SASL_PLAINTEXT", "sasl.mechanism=gssapi", "sasl.kerberos.service.name=kafka",
			"sasl.jaas.config=" + krb5Module + ` required useKeyTab=true storeKey=true keyTab="/etc/security/keytabs/txnscope.keytab" principal="txnscope/ops@EXAMPLE.COM";`}, "\n"),
			Config{Security: conn.Security{SASL: &conn.SASL{Mechanism: "GSSAPI", Kerberos: &conn.Kerberos{ServiceName: "kafka",
				Principal: "txnscope/ops@EXAMPLE.COM", Keytab: "/etc/security/keytabs/txnscope.keytab", Origin: "sasl.jaas.config (line 4)"}}}}},
		{"Kerberos by default, the ticket cache, the JAAS service name", strings.Join([]string{"security.protocol=SASL_SSL",
			"sasl.jaas.config=" + krb5Module + ` required useTicketCache=true serviceName="kafka";`}, "\n"),
			Config{Security: conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "GSSAPI", Kerberos: &conn.Kerberos{ServiceName: "kafka",
				TicketCache: conn.DefaultTicketCache, Origin: "sasl.jaas.config (line 2)"}}}}},
		{"Amazon MSK IAM", strings.Join([]string{"bootstrap.servers=b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098", "security.protocol=SASL_SSL",
			"sasl.mechanism=AWS_MSK_IAM", "sasl.client.callback.handler.class=" + mskClientHandler,
			"sasl.jaas.config=" + mskModule + ` required awsProfileName="ops" awsRoleArn="arn:aws:iam::123456789012:role/txnscope" awsRoleSessionName="oncall" awsStsRegion="eu-west-1";`}, "\n"),
			Config{Bootstrap: []string{"b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com:9098"}, Security: conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "AWS_MSK_IAM",
				AWS: &conn.AWSIAM{Profile: "ops", RoleARN: "arn:aws:iam::123456789012:role/txnscope", RoleSessionName: "oncall", STSRegion: "eu-west-1", Origin: "sasl.jaas.config (line 5)"}}}}},
		{"Amazon MSK IAM over OAUTHBEARER", strings.Join([]string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER",
			"sasl.login.callback.handler.class=" + mskOAuthHandler, "sasl.client.callback.handler.class=" + mskOAuthHandler,
			"sasl.jaas.config=" + oauthModule + " required;"}, "\n"),
			Config{Security: conn.Security{TLS: &conn.TLS{}, SASL: &conn.SASL{Mechanism: "OAUTHBEARER",
				AWS: &conn.AWSIAM{OAuthBearer: true, Origin: "sasl.jaas.config (line 5)"}}}}},
		{"last setting wins", "security.protocol=SSL\nsecurity.protocol=PLAINTEXT\n", Config{}},
		{"callback handler ignored without SASL", "security.protocol=SSL\nsasl.login.callback.handler.class=x.Y\n",
			Config{Security: conn.Security{TLS: &conn.TLS{}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseText(c.text)
			if err != nil {
				t.Fatalf("ParseText: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v\n(TLS %+v, SASL %+v)", got, c.want, got.Security.TLS, got.Security.SASL)
			}
		})
	}
}

func TestFromPropertiesErrors(t *testing.T) {
	jaas := func(module string) string {
		return `sasl.jaas.config=` + module + ` required username="u" password="` + secret + `";`
	}
	for _, c := range []struct {
		name string
		text []string
		want string
	}{
		{"JKS truststore", []string{"security.protocol=SSL", "ssl.truststore.location=/t.jks", "ssl.truststore.type=JKS", "ssl.truststore.password=" + secret},
			"line 3: ssl.truststore.type=JKS is not supported: convert it to PEM (keytool -exportcert -rfc"},
		{"truststore without type is JKS", []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", "ssl.truststore.location=/t.jks"},
			"line 3: a truststore without ssl.truststore.type is a JKS store, which is not supported: convert it to PEM"},
		{"PKCS12 keystore", []string{"security.protocol=SSL", "ssl.keystore.type=PKCS12", "ssl.keystore.location=/k.p12", "ssl.keystore.password=" + secret},
			"line 2: ssl.keystore.type=PKCS12 is not supported: convert it to PEM (keytool -importkeystore"},
		{"keystore without type is JKS", []string{"security.protocol=SSL", "ssl.keystore.location=/k.jks"},
			"line 2: a keystore without ssl.keystore.type is a JKS store"},
		{"encrypted key", []string{"security.protocol=SSL", "ssl.keystore.type=PEM", "ssl.keystore.location=/k.pem", "ssl.key.password=" + secret},
			"line 4: ssl.key.password is not supported: txnscope reads unencrypted keys only; decrypt the key (openssl pkcs8"},
		{"Kerberos by default, no login", []string{"bootstrap.servers=b:9092", "security.protocol=SASL_PLAINTEXT"},
			"line 2: SASL GSSAPI (Kerberos, Java's default mechanism) needs sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true"},
		{"Kerberos without a login", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka"},
			"line 2: SASL GSSAPI (Kerberos, Java's default mechanism) needs sasl.jaas.config="},
		{"Kerberos login module with PLAIN", []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", jaas("com.sun.security.auth.module.Krb5LoginModule")},
			"line 3: sasl.jaas.config uses Kerberos (Krb5LoginModule), which goes with sasl.mechanism=GSSAPI, not PLAIN"},
		{"GSSAPI with the SCRAM module", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", jaas(scramModule)},
			"line 3: sasl.jaas.config uses ScramLoginModule, which does not go with GSSAPI (Kerberos): use com.sun.security.auth.module.Krb5LoginModule"},
		{"Kerberos would prompt", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka",
			"sasl.jaas.config=" + krb5Module + ` required principal="txnscope@EXAMPLE.COM";`},
			"line 4: sasl.jaas.config's Krb5LoginModule needs useKeyTab=true with keyTab=\"...\" and principal=\"...\", or useTicketCache=true: without them Java asks for a password"},
		{"keytab without its path", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka",
			"sasl.jaas.config=" + krb5Module + ` required useKeyTab=true principal="txnscope@EXAMPLE.COM";`},
			"line 4: sasl.jaas.config's useKeyTab=true needs keyTab=\"/path/to/client.keytab\""},
		{"keytab without a principal", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka",
			"sasl.jaas.config=" + krb5Module + ` required useKeyTab=true keyTab="/k.keytab";`},
			"line 4: sasl.jaas.config's useKeyTab=true needs principal=\"name@REALM\""},
		{"no service name", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI",
			"sasl.jaas.config=" + krb5Module + ` required useTicketCache=true;`},
			"line 2: GSSAPI needs sasl.kerberos.service.name, the first part of the brokers' principal (often kafka)"},
		{"a principal for a service name", []string{"security.protocol=SASL_SSL", "sasl.mechanism=GSSAPI", "sasl.kerberos.service.name=kafka/b1@EXAMPLE.COM",
			"sasl.jaas.config=" + krb5Module + ` required useTicketCache=true;`},
			"line 2: sasl.kerberos.service.name=kafka/b1@EXAMPLE.COM is not a service name"},
		{"AWS IAM without a login", []string{"security.protocol=SASL_SSL", "sasl.mechanism=AWS_MSK_IAM"},
			"line 2: Amazon MSK IAM needs sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required;"},
		{"AWS IAM without the client handler", []string{"security.protocol=SASL_SSL", "sasl.mechanism=AWS_MSK_IAM", "sasl.jaas.config=" + mskModule + " required;"},
			"line 2: Amazon MSK IAM needs sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler"},
		{"AWS IAM with the OAuth module", []string{"security.protocol=SASL_SSL", "sasl.mechanism=AWS_MSK_IAM", jaas(oauthModule)},
			"line 3: sasl.jaas.config uses OAuthBearerLoginModule; with sasl.mechanism=AWS_MSK_IAM Amazon MSK IAM needs software.amazon.msk.auth.iam.IAMLoginModule"},
		{"AWS IAM: a role that is not an ARN", []string{"security.protocol=SASL_SSL", "sasl.mechanism=AWS_MSK_IAM", "sasl.client.callback.handler.class=" + mskClientHandler,
			"sasl.jaas.config=" + mskModule + ` required awsRoleArn="admin";`}, "line 4: sasl.jaas.config's awsRoleArn=admin is not an ARN"},
		{"another client handler", []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", "sasl.client.callback.handler.class=com.example.Mine"},
			"line 3: sasl.client.callback.handler.class=com.example.Mine: custom SASL callbacks are not supported (only Amazon MSK IAM's)"},
		{"unknown protocol", []string{"security.protocol=TLS"}, "line 1: security.protocol=TLS is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL"},
		{"callback handler without jaas", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthHandler},
			"line 3: sasl.login.callback.handler.class needs sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId=\"...\" clientSecret=\"...\";"},
		{"token endpoint without the handler", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", jaas(oauthModule),
			"sasl.oauthbearer.token.endpoint.url=https://idp/token"},
			"line 4: sasl.oauthbearer.token.endpoint.url needs sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler (without it the Java client makes an unsecured token"},
		{"handler without endpoint", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler},
			"line 4: sasl.login.callback.handler.class needs sasl.oauthbearer.token.endpoint.url, the token endpoint's URL"},
		{"another handler", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, "sasl.login.callback.handler.class=com.example.Mine"},
			"line 4: sasl.login.callback.handler.class=com.example.Mine is not supported: use org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"},
		{"handler with SCRAM", []string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-256", oauthHandler},
			"line 3: sasl.login.callback.handler.class: custom login callbacks are not supported with sasl.mechanism=SCRAM-SHA-256"},
		{"no client secret", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", "sasl.jaas.config=" + oauthModule + ` required clientId="c";`, oauthHandler, oauthEndpoint},
			"line 3: the client credentials grant needs clientId=\"...\" and clientSecret=\"...\" in sasl.jaas.config"},
		{"endpoint not a URL", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler, "sasl.oauthbearer.token.endpoint.url=idp/token"},
			"line 5: sasl.oauthbearer.token.endpoint.url=idp/token is not a URL: use https://HOST/PATH, or file:/PATH"},
		{"endpoint with a password", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler,
			"sasl.oauthbearer.token.endpoint.url=https://u:" + secret + "@idp/token"},
			"line 5: sasl.oauthbearer.token.endpoint.url holds a user name or password"},
		{"endpoint ftp", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler, "sasl.oauthbearer.token.endpoint.url=ftp://idp/token"},
			"line 5: sasl.oauthbearer.token.endpoint.url=ftp://idp/token: the scheme must be https, http or file"},
		{"window factor out of range", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler, oauthEndpoint,
			"sasl.login.refresh.window.factor=0.3"}, "line 6: sasl.login.refresh.window.factor=0.3 is not a number from 0.5 to 1"},
		{"buffer not a number", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", oauthJAAS, oauthHandler, oauthEndpoint,
			"sasl.login.refresh.buffer.seconds=5m"}, "line 6: sasl.login.refresh.buffer.seconds=5m is not a number from 0 to 3600"},
		{"JKS truststore for the endpoint", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER",
			"sasl.jaas.config=" + oauthModule + ` required clientId="c" clientSecret="` + secret + `" ssl.truststore.location="/t.jks";`, oauthHandler, oauthEndpoint},
			"line 3: sasl.jaas.config's ssl.truststore.location for the token endpoint needs ssl.truststore.type=\"PEM\""},
		{"JWT bearer grant", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", "sasl.oauthbearer.assertion.file=/a.jwt"},
			"line 3: sasl.oauthbearer.assertion.file: the JWT bearer grant is not supported: use the client credentials grant"},
		{"custom SSL engine", []string{"security.protocol=SSL", "ssl.engine.factory.class=x.Y"}, "line 2: ssl.engine.factory.class: custom SSL engines are not supported"},
		{"hostname algorithm", []string{"security.protocol=SSL", "ssl.endpoint.identification.algorithm=ldap"},
			"line 2: ssl.endpoint.identification.algorithm=ldap is not supported"},
		{"unreadable jaas", []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN",
			`sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret},
			"line 3: sasl.jaas.config cannot be read: a quoted value is not closed"},
		{"jaas without password", []string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-256",
			`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="u";`},
			`line 3: sasl.jaas.config's ScramLoginModule needs username="..." and password="..."`},
		{"module of another mechanism", []string{"security.protocol=SASL_SSL", "sasl.mechanism=OAUTHBEARER", jaas(plainModule)},
			"line 3: sasl.jaas.config uses PlainLoginModule, which does not go with sasl.mechanism=OAUTHBEARER"},
		{"oauth module with SCRAM", []string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-256", jaas(oauthModule)},
			"line 3: sasl.jaas.config uses OAuthBearerLoginModule, which does not go with sasl.mechanism=SCRAM-SHA-256"},
		{"unknown module", []string{"security.protocol=SASL_SSL", "sasl.mechanism=PLAIN", jaas("com.example.MyLoginModule")},
			"line 3: sasl.jaas.config's login module MyLoginModule is not supported"},
		{"delegation token", []string{"security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-256",
			`sasl.jaas.config=` + scramModule + ` required username="u" password="` + secret + `" tokenauth="true";`},
			"line 3: sasl.jaas.config's tokenauth (delegation tokens) is not supported"},
		{"empty bootstrap", []string{"bootstrap.servers= , "}, "line 1: bootstrap.servers is empty"},
		{"both truststores", []string{"security.protocol=SSL", "ssl.truststore.type=PEM", "ssl.truststore.location=a", "ssl.truststore.certificates=b"},
			"line 4: give ssl.truststore.location or ssl.truststore.certificates, not both"},
		{"inline key without chain", []string{"security.protocol=SSL", "ssl.keystore.type=PEM", "ssl.keystore.key=" + secret},
			"line 3: ssl.keystore.key needs ssl.keystore.certificate.chain"},
		{"malformed escape in the jaas", []string{"security.protocol=SASL_SSL", `sasl.jaas.config=x password="` + secret + `\u12"`},
			`line 2: in the value of sasl.jaas.config: malformed \uXXXX escape`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseText(strings.Join(c.text, "\n"))
			if err == nil {
				t.Fatalf("accepted; want %q", c.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, c.want) {
				t.Errorf("error %q\nwant prefix %q", msg, c.want)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") {
				t.Errorf("error shows a secret or spans lines: %q", msg)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(p, []byte("bootstrap.servers=b:9092\nsecurity.protocol=SSL\nssl.truststore.location=/t.jks\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(p)
	if err == nil || !strings.HasPrefix(err.Error(), p+": line 3: a truststore without ssl.truststore.type") {
		t.Errorf("error = %v", err)
	}
	_, err = ParseFile(filepath.Join(dir, "missing.properties"))
	if err == nil || err.Error() != filepath.Join(dir, "missing.properties")+": no such file or directory" {
		t.Errorf("error = %v", err)
	}
}

func TestParseFileNamesAndSecrets(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := write("full.properties", "security.protocol=SASL_SSL", "sasl.mechanism=PLAIN",
		`sasl.jaas.config=`+plainModule+` required username="u" password="`+secret+`";`,
		"ssl.truststore.type=PEM", "ssl.truststore.location=/a.pem", "ssl.truststore.location=/ca.pem",
		"ssl.keystore.type=PEM", "ssl.keystore.location=/client.pem")
	f, err := ParseFile(full)
	if err != nil {
		t.Fatal(err)
	}
	want := []Named{{"ssl.truststore.location", 6, "/ca.pem"}, {"ssl.keystore.location", 8, "/client.pem"}}
	if !reflect.DeepEqual(f.Named, want) || f.Secret != "sasl.jaas.config (line 3)" {
		t.Errorf("Named %+v, Secret %q; want %+v and sasl.jaas.config (line 3)", f.Named, f.Secret, want)
	}

	// Settings txnscope ignores still hold their secret on disk; a
	// truststore password guards nothing secret.
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"bootstrap.servers=b:1"}, ""},
		{[]string{"security.protocol=SSL", "ssl.truststore.password=changeit"}, ""},
		{[]string{"security.protocol=PLAINTEXT", "sasl.jaas.config=x"}, "sasl.jaas.config (line 2)"},
		{[]string{"ssl.keystore.password=" + secret}, "ssl.keystore.password (line 1)"},
		{[]string{"a=1", "sasl.oauthbearer.client.credentials.client.secret=" + secret}, "sasl.oauthbearer.client.credentials.client.secret (line 2)"},
	} {
		f, err := ParseFile(write("x.properties", tc.lines...))
		if err != nil || f.Secret != tc.want || f.Named != nil {
			t.Errorf("%q: Secret %q, Named %v, %v; want %q", tc.lines, f.Secret, f.Named, err, tc.want)
		}
	}
}

func TestParseFileOnlyRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: a character device, not a regular file"},
		{fifo, fifo + ": a named pipe (FIFO), not a regular file"},
		{t.TempDir(), ": a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() { _, err := ParseFile(tc.path); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
				t.Errorf("ParseFile(%s) = %v, want %q", tc.path, err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ParseFile(%s) still reading after 5s", tc.path)
		}
	}
}

func withOAuth(set func(*conn.OAuth)) *conn.OAuth {
	o := conn.OAuthDefaults()
	set(&o)
	return &o
}
