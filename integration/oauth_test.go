package integration

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/txnscope/txnscope/internal/clientprops"
	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/kafkaadmin"
)

// tokenCounter forwards to a token endpoint and counts the tokens it hands out.
type tokenCounter struct {
	srv    *httptest.Server
	tokens atomic.Int32
}

func countTokens(t *testing.T, target string) *tokenCounter {
	c := &tokenCounter{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			c.tokens.Add(1)
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// connCounter counts the connections a client opens.
type connCounter struct{ n atomic.Int32 }

func (c *connCounter) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	if err == nil {
		c.n.Add(1)
	}
}

// pollAuthenticated polls with one client made from sec, as the TUI and the exporter do, every
// second for d, failing the test unless each poll shows id; it returns the polls, how long they
// took, and the connections the client opened.
func pollAuthenticated(ctx context.Context, t *testing.T, bootstrap []string, sec conn.Security, id string, d time.Duration) (polls int, took time.Duration, conns int32) {
	t.Helper()
	counter := &connCounter{}
	cl, err := kafkaadmin.New(kafkaadmin.Config{Bootstrap: bootstrap, Security: sec, Timeout: 10 * time.Second, Hooks: []kgo.Hook{counter}})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	start := time.Now()
	for time.Since(start) < d {
		snap, err := cl.Refresh(ctx, nil)
		if err != nil {
			t.Fatalf("poll at %s: %v", time.Since(start).Round(time.Second), err)
		}
		if _, ok := snap.Txn(id); !ok {
			t.Fatalf("poll at %s: %s not in the snapshot", time.Since(start).Round(time.Second), id)
		}
		polls++
		time.Sleep(time.Second)
	}
	return polls, time.Since(start), counter.n.Load()
}

// TestOAuthClientCredentials: a broker whose OAUTHBEARER listener checks signed JWTs against a
// real OAuth 2 server (Ory Hydra; Kafka's own validator, its JWKS), and the client.properties a
// Kafka user writes for it (KIP-768 client credentials). The one-shot commands and the TUI list
// the open transaction from that file; Kafka's own kafka-transactions.sh accepts the same file;
// a wrong secret is one line naming the endpoint's refusal and the setting, never the secret.
// Tokens live 10 s and the listener re-authenticates every 4 s (KIP-368): a client polling for
// 35 s, as the TUI and the exporter do, keeps working on the connections it opened, with tokens
// fetched again as each nears its end.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const ttl = 10 * time.Second
	idp := StartIdP(t, ttl)
	endpoint := countTokens(t, idp.TokenURL)
	b := StartBroker(t, BrokerOptions{OAuthJWKS: idp.JWKSURL, OAuthIssuer: idp.Issuer, OAuthReauth: 4 * time.Second})
	bin := buildTxnscope(ctx, t)

	adm := newAdmin(t, b.Bootstrap)
	tp := topicOn(ctx, t, adm)
	id := name(t, "txn")
	p := producer(t, b.Bootstrap, id, 10*time.Minute)
	openTxn(ctx, t, p, tp, 2, "oauth")
	defer endTxn(ctx, t, p, false)

	dir := t.TempDir()
	props := func(name, secret string) string {
		f := filepath.Join(dir, name)
		text := strings.Join([]string{
			"bootstrap.servers=" + b.OAuthBootstrap,
			"security.protocol=SASL_PLAINTEXT",
			"sasl.mechanism=OAUTHBEARER",
			"sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
			"sasl.oauthbearer.token.endpoint.url=" + endpoint.srv.URL + "/oauth2/token",
			`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="` + idp.ClientID +
				`" clientSecret="` + secret + `" scope="kafka";`,
		}, "\n") + "\n"
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	good, wrong := props("oauth.properties", idp.ClientSecret), props("wrong.properties", "not-"+idp.ClientSecret)

	t.Run("list", func(t *testing.T) {
		r := runTxnscope(ctx, t, bin, nil, "list", "--command-config", good)
		if r.code != 0 || listRow(r.stdout, id) == "" {
			t.Fatalf("want a row for %s\n%s", id, r)
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		r := runTxnscope(ctx, t, bin, nil, "snapshot", "-o", "json", "--command-config", good)
		if r.code != 0 || !strings.Contains(r.stdout, id) {
			t.Fatalf("want %s in the snapshot\n%s", id, r)
		}
	})
	t.Run("wrong-secret", func(t *testing.T) {
		r := runTxnscope(ctx, t, bin, nil, "list", "--command-config", wrong)
		wantFailure(t, r, 1, []string{"sasl.oauthbearer.token.endpoint.url (line 5)", "401", "invalid_client", "clientSecret"})
		if strings.Contains(r.stdout+r.stderr, "not-"+idp.ClientSecret) || strings.Contains(r.stdout+r.stderr, idp.ClientSecret) {
			t.Errorf("the secret is printed:\n%s", r)
		}
	})
	t.Run("kafka-transactions.sh-accepts-the-file", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, filepath.Join(repoRoot(t), "scripts", "kafka-tools"), "transactions", "--command-config", good,
			"--bootstrap-server", b.OAuthBootstrap, "list")
		// Kafka 4 asks the token endpoint only when this system property allows its URL.
		cmd.Env = append(os.Environ(), "KAFKA_TOOLS_JAVA_OPTS=-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="+endpoint.srv.URL+"/oauth2/token")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil || !strings.Contains(out.String(), id) {
			t.Fatalf("kafka-transactions.sh --command-config %s list: %v, want a row for %s\nstdout: %s\nstderr: %s", good, err, id, out.String(), tail(errb.String(), 20))
		}
	})
	t.Run("tui", func(t *testing.T) {
		term := startTUI(ctx, t, b.OAuthBootstrap, "--command-config", good)
		term.WaitText([]string{id[len(id)-10:]})
		term.quit()
	})

	// As the TUI and the exporter run: one client, polling, for several token lifetimes.
	t.Run("outlives-several-tokens", func(t *testing.T) {
		file, err := clientprops.ParseFile(good)
		if err != nil {
			t.Fatal(err)
		}
		before := endpoint.tokens.Load()
		polls, took, conns := pollAuthenticated(ctx, t, file.Bootstrap, file.Security, id, 35*time.Second)
		tokens := endpoint.tokens.Load() - before
		t.Logf("%d polls over %s: %d tokens fetched (each lives %s), %d connections opened", polls, took.Round(time.Second), tokens, ttl, conns)
		// 80 % of 10 s (the Java client's window, which txnscope follows): a token every 8–8.5 s.
		if tokens < 3 {
			t.Errorf("%d tokens fetched in 35 s of tokens that live %s: they were not refreshed", tokens, ttl)
		}
		// Re-authentication happens on the open connections: a client that could not
		// re-authenticate would have its connections closed by the broker every 4 s.
		if conns > 4 {
			t.Errorf("%d connections opened in 35 s: the broker closed them rather than re-authenticate", conns)
		}
	})
}
