package conn

// Kerberos is SASL GSSAPI as a Java client's Krb5LoginModule logs in: with
// a keytab and a principal, or a ticket cache kinit filled, against the KDCs
// of a krb5.conf.
type Kerberos struct {
	// ServiceName is the first part of the brokers' principal
	// (sasl.kerberos.service.name, or the JAAS option serviceName).
	ServiceName string
	// Principal is the client's principal, "name@REALM" (the realm defaults
	// to krb5.conf's default_realm); empty with a ticket cache: its own.
	Principal string
	// Keytab holds the principal's keys (useKeyTab=true keyTab=...).
	Keytab string
	// TicketCache is the cache to read (useTicketCache=true): ticketCache,
	// or DefaultTicketCache. Tried before the keytab, as Java does, when
	// both are given.
	TicketCache string
	// Krb5Conf is the krb5.conf to read; empty: $KRB5_CONFIG, else
	// /etc/krb5.conf (a properties file does not say: Java reads the
	// system property java.security.krb5.conf).
	Krb5Conf string
	// Origin names the setting in messages: "sasl.jaas.config (line 4)".
	Origin string
}

// DefaultTicketCache stands for the cache kinit fills: $KRB5CCNAME, else
// /tmp/krb5cc_UID, found when the client starts.
const DefaultTicketCache = "(default)"
