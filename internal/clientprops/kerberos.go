package clientprops

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/internal/conn"
)

const krb5Module = "com.sun.security.auth.module.Krb5LoginModule"

// kerberosFrom reads a GSSAPI client's login as the Java client's
// Krb5LoginModule does (with doNotPrompt: txnscope never asks for a
// password): a keytab and its principal, or a ticket cache, and the brokers'
// service name. line is where GSSAPI was chosen (sasl.mechanism, or
// security.protocol when sasl.mechanism is left to Java's default).
func kerberosFrom(m map[string]Entry, line int) (*conn.Kerberos, error) {
	je, ok := m["sasl.jaas.config"]
	if !ok {
		return nil, fmt.Errorf("line %d: SASL GSSAPI (Kerberos, Java's default mechanism) needs sasl.jaas.config=%s required useKeyTab=true "+
			`keyTab="..." principal="..."; (or useTicketCache=true); txnscope reads no JAAS file (java.security.auth.login.config)`, line, krb5Module)
	}
	j, err := parseJAAS(je.Value)
	if err != nil {
		return nil, fmt.Errorf("line %d: sasl.jaas.config cannot be read: %v", je.Line, err)
	}
	if !strings.HasSuffix(j.module, "."+kerberosHint) {
		module := j.module[strings.LastIndex(j.module, ".")+1:]
		return nil, fmt.Errorf("line %d: sasl.jaas.config uses %s, which does not go with GSSAPI (Kerberos): use %s", je.Line, short(module), krb5Module)
	}
	k := &conn.Kerberos{Origin: fmt.Sprintf("sasl.jaas.config (line %d)", je.Line)}
	yes := func(key string) bool { return strings.EqualFold(strings.TrimSpace(j.options[key]), "true") }
	useKeytab, useCache := yes("useKeyTab"), yes("useTicketCache")
	k.Principal = strings.TrimSpace(j.options["principal"])
	switch {
	case !useKeytab && !useCache:
		return nil, fmt.Errorf(`line %d: sasl.jaas.config's Krb5LoginModule needs useKeyTab=true with keyTab="..." and principal="...", `+
			"or useTicketCache=true: without them Java asks for a password, which txnscope never does", je.Line)
	case useKeytab && strings.TrimSpace(j.options["keyTab"]) == "":
		return nil, fmt.Errorf(`line %d: sasl.jaas.config's useKeyTab=true needs keyTab="/path/to/client.keytab" (txnscope does not read krb5.conf's default keytab)`, je.Line)
	case useKeytab && k.Principal == "":
		return nil, fmt.Errorf(`line %d: sasl.jaas.config's useKeyTab=true needs principal="name@REALM"`, je.Line)
	}
	if useKeytab {
		k.Keytab = strings.TrimSpace(j.options["keyTab"])
	}
	if useCache {
		// "" is the default cache, found when the client starts ($KRB5CCNAME, /tmp/krb5cc_UID).
		k.TicketCache = strings.TrimSpace(j.options["ticketCache"])
		if k.TicketCache == "" {
			k.TicketCache = conn.DefaultTicketCache
		}
	}
	if e, ok := m["sasl.kerberos.service.name"]; ok {
		k.ServiceName = strings.TrimSpace(e.Value)
	} else {
		k.ServiceName = strings.TrimSpace(j.options["serviceName"])
	}
	if k.ServiceName == "" {
		return nil, fmt.Errorf("line %d: GSSAPI needs sasl.kerberos.service.name, the first part of the brokers' principal (often kafka)", line)
	}
	if strings.ContainsAny(k.ServiceName, "/@ ") {
		return nil, fmt.Errorf("line %d: sasl.kerberos.service.name=%s is not a service name: give only the first part of the brokers' principal (kafka, not kafka/host@REALM)",
			line, short(k.ServiceName))
	}
	return k, nil
}
