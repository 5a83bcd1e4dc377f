package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/clientprops"
)

// TestKerberos: a broker with a GSSAPI listener, its principal kafka/localhost in a real MIT KDC
// whose tickets live 20 s, and the client.properties an on-premise Kafka user writes
// (Krb5LoginModule with a keytab, or the ticket cache kinit filled). The one-shot commands and
// the TUI list the open transaction; Kafka's own kafka-transactions.sh accepts the same file; an
// unknown principal, a wrong service name and an empty ticket cache are each one line naming the
// cause and the setting; a client polling for 50 s, as the TUI and the exporter do, logs in again
// from its keytab as tickets expire and keeps working.
func TestKerberos(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const life = 20 * time.Second
	kdc := StartKDC(t, life)
	brokerKeytab := kdc.Principal(t, "kafka/localhost")
	clientKeytab := kdc.Principal(t, "txnscope")
	b := StartBroker(t, BrokerOptions{KerberosKeytab: brokerKeytab, Krb5Conf: kdc.Krb5Conf, KerberosReauth: 5 * time.Second})
	bin := buildTxnscope(ctx, t)
	env := []string{"KRB5_CONFIG=" + kdc.Krb5Conf}

	adm := newAdmin(t, b.Bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, tp, 2, "kerberos")
	defer endTxn(ctx, t, p, false)

	dir := t.TempDir()
	props := func(file, service, jaasOptions string) string {
		f := filepath.Join(dir, file)
		text := strings.Join([]string{
			"bootstrap.servers=" + b.KerberosBootstrap,
			"security.protocol=SASL_PLAINTEXT",
			"sasl.mechanism=GSSAPI",
			"sasl.kerberos.service.name=" + service,
			"sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required " + jaasOptions + ";",
		}, "\n") + "\n"
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	keytabOpts := `useKeyTab=true storeKey=true keyTab="` + clientKeytab + `" principal="txnscope@` + Realm + `"`
	good := props("keytab.properties", "kafka", keytabOpts)

	t.Run("keytab", func(t *testing.T) {
		r := runTxnscope(ctx, t, bin, env, "list", "--command-config", good)
		if r.code != 0 || listRow(r.stdout, id) == "" {
			t.Fatalf("want a row for %s\n%s", id, r)
		}
	})
	t.Run("ticket-cache", func(t *testing.T) {
		cache := kdc.Kinit(t, "txnscope", clientKeytab, 0)
		f := props("cache.properties", "kafka", `useTicketCache=true ticketCache="`+cache+`"`)
		r := runTxnscope(ctx, t, bin, env, "snapshot", "-o", "json", "--command-config", f)
		if r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Fatalf("want %s in the snapshot\n%s", id, r)
		}
	})
	t.Run("no-ticket-in-the-cache", func(t *testing.T) {
		f := props("nocache.properties", "kafka", `useTicketCache=true ticketCache="`+filepath.Join(dir, "krb5cc_none")+`"`)
		r := runTxnscope(ctx, t, bin, env, "list", "--command-config", f)
		// Found before anything connects: a bad login in the file, as a bad file is (exit 2).
		wantFailure(t, r, 2, []string{"the ticket cache", "no such file or directory", "run kinit"})
	})
	t.Run("expired-ticket-cache", func(t *testing.T) {
		cache := kdc.Kinit(t, "txnscope", clientKeytab, 2*time.Second)
		time.Sleep(3 * time.Second)
		f := props("expired.properties", "kafka", `useTicketCache=true ticketCache="`+cache+`"`)
		r := runTxnscope(ctx, t, bin, env, "list", "--command-config", f)
		wantFailure(t, r, 2, []string{"the ticket cache", "its ticket expired at", "run kinit"})
		// With a keytab as well, as Java does: the cache first, then the keytab.
		f = props("expired-and-keytab.properties", "kafka", `useTicketCache=true ticketCache="`+cache+`" `+keytabOpts)
		if r := runTxnscope(ctx, t, bin, env, "list", "--command-config", f); r.code != 0 || listRow(r.stdout, id) == "" {
			t.Errorf("an expired cache beside a keytab: want the keytab used\n%s", r)
		}
	})
	t.Run("unknown-principal", func(t *testing.T) {
		f := props("unknown.properties", "kafka", `useKeyTab=true keyTab="`+clientKeytab+`" principal="nobody@`+Realm+`"`)
		r := runTxnscope(ctx, t, bin, env, "list", "--command-config", f)
		wantFailure(t, r, 1, []string{"nobody@" + Realm})
	})
	t.Run("wrong-service-name", func(t *testing.T) {
		f := props("service.properties", "kafka-wrong", keytabOpts)
		r := runTxnscope(ctx, t, bin, env, "list", "--command-config", f)
		wantFailure(t, r, 1, []string{"the KDC does not know the broker's principal kafka-wrong/localhost", "sasl.kerberos.service.name"})
	})
	t.Run("kafka-transactions.sh-accepts-the-file", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "kafka-tools"), "transactions", "--command-config", good,
			"--bootstrap-server", b.KerberosBootstrap, "list")
		cmd.Env = append(os.Environ(), "KAFKA_TOOLS_JAVA_OPTS=-Djava.security.krb5.conf="+kdc.Krb5Conf)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), id) {
			t.Fatalf("kafka-transactions.sh --command-config %s list: %v, want a row for %s\nstdout: %s\nstderr: %s", good, err, id, out.String(), tail(errb.String(), 20))
		}
	})
	t.Run("tui", func(t *testing.T) {
		term := startTUIEnv(ctx, t, env, b.KerberosBootstrap, "--command-config", good)
		term.WaitText([]string{id[len(id)-10:]})
		term.quit()
	})
	t.Run("outlives-several-tickets", func(t *testing.T) {
		file, err := clientprops.ParseFile(good)
		if err != nil {
			t.Fatal(err)
		}
		file.Security.SASL.Kerberos.Krb5Conf = kdc.Krb5Conf // what KRB5_CONFIG says to the binary
		logins := kdc.Logins(t, "txnscope")
		polls, took, conns := pollAuthenticated(ctx, t, file.Bootstrap, file.Security, id, 50*time.Second)
		logins = kdc.Logins(t, "txnscope") - logins
		t.Logf("%d polls over %s with tickets that live %s (re-authentication every 5 s): %d connections opened, %d logins at the KDC",
			polls, took.Round(time.Second), life, conns, logins)
		if logins < 2 {
			t.Errorf("%d logins at the KDC in 50 s of tickets that live %s: the login was not renewed", logins, life)
		}
		if conns > 4 {
			t.Errorf("%d connections opened in 50 s: the broker closed them rather than re-authenticate", conns)
		}
	})
}
