package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jcmturner/gokrb5/v8/client"
	"github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/credentials"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/kerberos"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/inputfile"
)

// kerberosMechanism is GSSAPI as the Java client's Krb5LoginModule logs in
// (a ticket cache first when both are given, then the keytab). One Kerberos
// client serves every connection: with a keytab it logs in again when its
// ticket nears its end, so a TUI or an exporter outlives any ticket lifetime;
// a ticket cache lasts as long as kinit's ticket.
func kerberosMechanism(k conn.Kerberos) (sasl.Mechanism, error) {
	confPath := k.Krb5Conf
	if confPath == "" {
		confPath = krb5ConfPath()
	}
	data, err := inputfile.Read(confPath)
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: krb5.conf %s: %w (set KRB5_CONFIG to the realm's krb5.conf)", confPath, err)
	}
	cfg, err := config.NewFromString(string(data))
	if err != nil {
		return nil, fmt.Errorf("GSSAPI: krb5.conf %s cannot be read: %s", confPath, oneLine(err))
	}
	cl, from, err := kerberosClient(k, cfg)
	if err != nil {
		return nil, err
	}
	who := k.Principal
	if who == "" {
		who = cl.Credentials.CName().PrincipalNameString() + "@" + cl.Credentials.Domain()
	}
	inner := kerberos.Auth{Client: cl, Service: k.ServiceName, PersistAfterAuth: true}.AsMechanism()
	return &krbMechanism{Mechanism: inner, k: k, who: who, from: from, conf: confPath}, nil
}

// kerberosClient logs in from the ticket cache (when given and it holds an
// unexpired ticket) or else the keytab; from names which, for messages.
func kerberosClient(k conn.Kerberos, cfg *config.Config) (*client.Client, string, error) {
	var cacheErr error
	if k.TicketCache != "" {
		path, err := ticketCachePath(k.TicketCache)
		if err == nil {
			var cc *credentials.CCache
			if cc, err = credentials.LoadCCache(path); err == nil {
				if err = tgtExpired(cc, time.Now()); err == nil {
					var cl *client.Client
					if cl, err = client.NewFromCCache(cc, cfg, client.DisablePAFXFAST(true)); err == nil {
						return cl, "the ticket cache " + path, nil
					}
				}
			}
		}
		cacheErr = fmt.Errorf("GSSAPI (%s): the ticket cache %s: %s: run kinit, or give useKeyTab=true with keyTab and principal",
			k.Origin, escape.Line(path), oneLine(err))
		if k.Keytab == "" {
			return nil, "", cacheErr
		}
	}
	data, err := inputfile.Read(k.Keytab)
	if err != nil {
		return nil, "", fmt.Errorf("GSSAPI (%s): keyTab %s: %w", k.Origin, k.Keytab, err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(data); err != nil {
		return nil, "", fmt.Errorf("GSSAPI (%s): keyTab %s is not a keytab: %s", k.Origin, k.Keytab, oneLine(err))
	}
	name, realm := splitPrincipal(k.Principal, cfg.LibDefaults.DefaultRealm)
	if realm == "" {
		return nil, "", fmt.Errorf("GSSAPI (%s): principal %s names no realm and krb5.conf has no default_realm", k.Origin, escape.Line(k.Principal))
	}
	return client.NewWithKeytab(name, realm, kt, cfg, client.DisablePAFXFAST(true)), "the keytab " + k.Keytab, nil
}

// tgtExpired is an error when the cache's ticket-granting ticket has
// expired (or it holds none): a client made from it could only fail later.
func tgtExpired(cc *credentials.CCache, now time.Time) error {
	for _, c := range cc.GetEntries() {
		if n := c.Server.PrincipalName.NameString; len(n) > 0 && n[0] == "krbtgt" {
			if !c.EndTime.After(now) {
				return fmt.Errorf("its ticket expired at %s", c.EndTime.UTC().Format(time.RFC3339))
			}
			return nil
		}
	}
	return errors.New("it holds no ticket-granting ticket")
}

// splitPrincipal parses "name[/instance]@REALM".
func splitPrincipal(p, defaultRealm string) (name, realm string) {
	if i := strings.LastIndexByte(p, '@'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, defaultRealm
}

// krb5ConfPath is the krb5.conf MIT's tools read: $KRB5_CONFIG's first
// file, else /etc/krb5.conf. (Java reads java.security.krb5.conf, else the same.)
func krb5ConfPath() string {
	if v := os.Getenv("KRB5_CONFIG"); v != "" {
		return strings.Split(v, ":")[0]
	}
	return "/etc/krb5.conf"
}

// ticketCachePath resolves the default cache as kinit does: $KRB5CCNAME,
// else /tmp/krb5cc_UID. Only file caches can be read.
func ticketCachePath(p string) (string, error) {
	if p != conn.DefaultTicketCache {
		return strings.TrimPrefix(p, "FILE:"), nil
	}
	v := os.Getenv("KRB5CCNAME")
	if v == "" {
		return "/tmp/krb5cc_" + strconv.Itoa(os.Getuid()), nil
	}
	if path, ok := strings.CutPrefix(v, "FILE:"); ok || !strings.Contains(v, ":") {
		return path, nil
	}
	return "", fmt.Errorf("KRB5CCNAME=%s is not a file cache, which is all txnscope reads: kinit -c FILE:/tmp/krb5cc_txnscope", escape.Line(v))
}

// krbMechanism names the broker as Java's client does and says a failed
// login in one line, naming what to fix.
type krbMechanism struct {
	sasl.Mechanism
	k               conn.Kerberos
	who, from, conf string
}

func (m *krbMechanism) Authenticate(ctx context.Context, hostport string) (sasl.Session, []byte, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, nil, err
	}
	host = canonicalHost(ctx, host)
	s, first, err := m.Mechanism.Authenticate(ctx, net.JoinHostPort(host, port))
	if err != nil {
		return nil, nil, m.explain(err, host)
	}
	return s, first, nil
}

// canonicalHost is the name in the broker's principal as the Java client
// finds it: the host as dialled, or for an IP address the name it resolves
// back to (InetAddress.getHostName), else the address itself.
func canonicalHost(ctx context.Context, host string) string {
	if net.ParseIP(host) == nil {
		return host
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	names, err := net.DefaultResolver.LookupAddr(ctx, host)
	if err != nil || len(names) == 0 {
		return host
	}
	return strings.TrimSuffix(names[0], ".")
}

// explain turns gokrb5's error into one line: the cause in Kerberos' words,
// what to fix, and which setting.
func (m *krbMechanism) explain(err error, host string) error {
	text := oneLine(err)
	spn := m.k.ServiceName + "/" + host
	var hint string
	switch {
	case strings.Contains(text, "KDC_ERR_C_PRINCIPAL_UNKNOWN"):
		hint = fmt.Sprintf("the KDC does not know %s: check principal in %s", m.who, m.k.Origin)
	case strings.Contains(text, "KDC_ERR_S_PRINCIPAL_UNKNOWN"):
		hint = fmt.Sprintf("the KDC does not know the broker's principal %s: check sasl.kerberos.service.name, and that %s is the host name in the broker's principal", spn, host)
	case strings.Contains(text, "KDC_ERR_PREAUTH_FAILED"), strings.Contains(text, "Checksum"), strings.Contains(text, "decrypt"):
		hint = fmt.Sprintf("the KDC refused %s's key from %s: the keytab is stale (the principal's key changed: export it again)", m.who, m.from)
	case strings.Contains(text, "SKEW"):
		hint = "this machine's clock and the KDC's differ by more than the allowed skew: fix the clock"
	case strings.Contains(text, "TGT") && strings.Contains(text, "expire"), strings.Contains(text, "KRB_AP_ERR_TKT_EXPIRED"):
		hint = fmt.Sprintf("the ticket from %s has expired: run kinit again, or give useKeyTab=true with keyTab and principal", m.from)
	case strings.Contains(text, "Networking_Error"), strings.Contains(text, "communicate with KDC"):
		hint = fmt.Sprintf("cannot reach a KDC of the realm: check its kdc entries in %s", m.conf)
	}
	if hint == "" {
		return fmt.Errorf("GSSAPI login of %s to %s (%s): %s", m.who, spn, m.k.Origin, text)
	}
	return fmt.Errorf("GSSAPI login of %s to %s (%s): %s (%s)", m.who, spn, m.k.Origin, hint, text)
}

// oneLine is err's text on one line, escaped.
func oneLine(err error) string {
	if err == nil {
		return "no error"
	}
	return escape.Line(strings.Join(strings.Fields(err.Error()), " "))
}
