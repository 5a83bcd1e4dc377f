package integration

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/txnscope/txnscope/internal/testutil/kafkatest"
)

// serverProperties is kafka-up's single-node configuration on the given ports (PLAINTEXT, CONTROLLER,
// then the secure listeners), with the options' additions; it records the addresses in b.
func serverProperties(b *Broker, o BrokerOptions, ports []int, data string) string {
	addr := func(i int) string { return "127.0.0.1:" + strconv.Itoa(ports[i]) }
	b.Bootstrap = addr(0)
	ctrl := addr(1)
	listeners := []string{"PLAINTEXT://" + b.Bootstrap, "CONTROLLER://" + ctrl}
	advertised := []string{"PLAINTEXT://" + b.Bootstrap}
	protocols := "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
	if o.Secure {
		b.SecureBootstrap, b.MutualTLSBootstrap, b.TLSBootstrap, b.NamedBootstrap = addr(2), addr(3), addr(4), addr(5)
		for _, l := range []struct{ name, addr string }{
			{"SASL_SSL", b.SecureBootstrap}, {"MTLS", b.MutualTLSBootstrap}, {"TLS", b.TLSBootstrap}, {"NAMED", b.NamedBootstrap},
		} {
			listeners = append(listeners, l.name+"://"+l.addr)
			advertised = append(advertised, l.name+"://"+l.addr)
		}
		protocols += ",SASL_SSL:SASL_SSL,MTLS:SSL,TLS:SSL,NAMED:SSL"
	}
	if o.OAuthJWKS != "" {
		b.OAuthBootstrap = addr(6)
		listeners = append(listeners, "OAUTH://"+b.OAuthBootstrap)
		advertised = append(advertised, "OAUTH://"+b.OAuthBootstrap)
		protocols += ",OAUTH:SASL_PLAINTEXT"
	}
	if o.KerberosKeytab != "" {
		b.KerberosBootstrap = addr(7)
		listeners = append(listeners, "GSSAPI://"+b.KerberosBootstrap)
		advertised = append(advertised, "GSSAPI://"+b.KerberosBootstrap)
		protocols += ",GSSAPI:SASL_PLAINTEXT"
	}
	lines := []string{
		"# written by integration.StartBroker",
		"process.roles=broker,controller",
		"node.id=1",
		"controller.quorum.bootstrap.servers=" + ctrl,
		"listeners=" + strings.Join(listeners, ","),
		"advertised.listeners=" + strings.Join(advertised, ","),
		"controller.listener.names=CONTROLLER",
		"inter.broker.listener.name=PLAINTEXT",
		"listener.security.protocol.map=" + protocols,
		"log.dirs=" + data,
		"num.partitions=1",
		"default.replication.factor=1",
		"auto.create.topics.enable=true",
		"offsets.topic.replication.factor=1",
		"transaction.state.log.replication.factor=1",
		"transaction.state.log.min.isr=1",
		"transaction.abort.timed.out.transaction.cleanup.interval.ms=1000",
		"share.coordinator.state.topic.replication.factor=1",
		"share.coordinator.state.topic.min.isr=1",
		"group.initial.rebalance.delay.ms=0",
		// After a SIGKILL the restarted node cannot register until the controller has expired the
		// dead incarnation's session (default 9 s); 4 s still tolerates a loaded CI machine.
		"broker.heartbeat.interval.ms=500",
		"broker.session.timeout.ms=4000",
	}
	if o.Secure {
		lines = append(lines, secureProperties(b.Certs, b.Named, o)...)
	}
	if o.Authorizer {
		supers := append([]string{"User:ANONYMOUS"}, o.SuperUsers...)
		lines = append(lines,
			"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
			"super.users="+strings.Join(supers, ";"),
			"allow.everyone.if.no.acl.found=false")
	}
	if o.OAuthJWKS != "" {
		lines = append(lines, oauthProperties(o)...)
	}
	if o.KerberosKeytab != "" {
		const pre = "listener.name.gssapi.gssapi."
		lines = append(lines,
			"listener.name.gssapi.sasl.enabled.mechanisms=GSSAPI",
			pre+"sasl.kerberos.service.name=kafka",
			pre+`sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required serviceName="kafka" useKeyTab=true storeKey=true keyTab="`+
				o.KerberosKeytab+`" principal="kafka/localhost@`+Realm+`";`)
		if o.KerberosReauth > 0 {
			lines = append(lines, pre+"connections.max.reauth.ms="+strconv.FormatInt(o.KerberosReauth.Milliseconds(), 10))
		}
	}
	lines = append(lines, o.Props...)
	return strings.Join(lines, "\n") + "\n"
}

// secureProperties configures the SASL_SSL and SSL listeners with PEM files, as Kafka reads them
// since 2.7 (KIP-651): the key and its chain in one keystore file, the CA as the truststore.
func secureProperties(c kafkatest.Certs, named NamedCert, o BrokerOptions) []string {
	lines := []string{
		"ssl.keystore.type=PEM",
		"ssl.keystore.location=" + c.ServerChainFile,
		"ssl.truststore.type=PEM",
		"ssl.truststore.location=" + c.CAFile,
		"listener.name.mtls.ssl.client.auth=required",
		"listener.name.tls.ssl.client.auth=none",
		"listener.name.named.ssl.client.auth=none",
		"listener.name.named.ssl.keystore.type=PEM",
		"listener.name.named.ssl.keystore.location=" + named.ChainFile,
	}
	mechs := []string{"SCRAM-SHA-256", "SCRAM-SHA-512"}
	lines = append(lines,
		"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;",
		"listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;")
	if len(o.PlainUsers) > 0 {
		mechs = append(mechs, "PLAIN")
		jaas := "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
		for _, name := range slices.Sorted(maps.Keys(o.PlainUsers)) {
			jaas += fmt.Sprintf(" user_%s=%q", name, o.PlainUsers[name])
		}
		lines = append(lines, jaas+";")
	}
	if o.OAuthBearer {
		mechs = append(mechs, "OAUTHBEARER")
		lines = append(lines,
			"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub=\"broker\";")
	}
	return append(lines, "listener.name.sasl_ssl.sasl.enabled.mechanisms="+strings.Join(mechs, ","))
}

// oauthProperties validates the OAUTH listener's tokens as a production broker does: signatures
// against the provider's JWKS, with Kafka's own validator.
func oauthProperties(o BrokerOptions) []string {
	const pre = "listener.name.oauth.oauthbearer."
	lines := []string{
		"listener.name.oauth.sasl.enabled.mechanisms=OAUTHBEARER",
		pre + "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
		pre + "sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		pre + "sasl.oauthbearer.jwks.endpoint.url=" + o.OAuthJWKS,
		// Kafka 4.4 wants the audience checked; the Java client has no way to ask for one (its
		// token request sends none), so the JWTs of kafka-transactions.sh carry none either.
		pre + "sasl.oauthbearer.allow.unverified.audience=true",
		pre + "sasl.oauthbearer.expected.issuer=" + o.OAuthIssuer,
	}
	if o.OAuthReauth > 0 {
		lines = append(lines, pre+"connections.max.reauth.ms="+strconv.FormatInt(o.OAuthReauth.Milliseconds(), 10))
	}
	return lines
}

// jvmProps are the -D flags the options need: Kafka 4 reads a JWKS or token URL only when a
// system property allows it; Java finds the realm's KDC in the krb5.conf another names.
func (o BrokerOptions) jvmProps() []string {
	var out []string
	if o.OAuthJWKS != "" {
		out = append(out, "-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+o.OAuthJWKS)
	}
	if o.Krb5Conf != "" {
		out = append(out, "-Djava.security.krb5.conf="+o.Krb5Conf)
	}
	return out
}
