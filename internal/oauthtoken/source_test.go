package oauthtoken

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/testutil"
)

const secret = "s3cr3t+/=ü"

// jwt is an unsigned token with the given claims (the client never checks
// the signature: the broker does).
func jwt(claims map[string]any) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	p, _ := json.Marshal(claims)
	return h + "." + base64.RawURLEncoding.EncodeToString(p) + ".c2ln"
}

var t0 = time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)

func tokenFor(iat time.Time, life time.Duration) string {
	return jwt(map[string]any{"sub": "txnscope", "iat": iat.Unix(), "exp": iat.Add(life).Unix(), "scope": "kafka"})
}

func cfgFor(url string) conn.OAuth {
	o := conn.OAuthDefaults()
	o.TokenURL, o.ClientID, o.ClientSecret, o.Scope = url, "txnscope", secret, "kafka"
	o.Origin, o.SecretOrigin = "sasl.oauthbearer.token.endpoint.url (line 4)", "sasl.jaas.config's clientSecret (line 5)"
	return o
}

// fakeClock is a Source's clock and sleep: sleeping moves it.
type fakeClock struct{ now time.Time }

func newSource(t *testing.T, cfg conn.OAuth, clk *fakeClock) *Source {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return clk.now }
	s.jitter = func() float64 { return 0 }
	s.sleep = func(_ context.Context, d time.Duration) error { clk.now = clk.now.Add(d); return nil }
	return s
}

// TestTokenFetchedAndRefreshed: the grant is sent as the Java client sends it;
// the token is kept until the Java client's refresh time, then fetched again.
func TestTokenFetchedAndRefreshed(t *testing.T) {
	clk := &fakeClock{now: t0}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		r.ParseForm()
		if got := r.Header.Get("Authorization"); got != "Basic "+base64.StdEncoding.EncodeToString([]byte("txnscope:"+secret)) {
			t.Errorf("Authorization %q", got)
		}
		if r.Method != http.MethodPost || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "kafka" ||
			r.PostForm.Get("audience") != "" || r.PostForm.Get("client_secret") != "" {
			t.Errorf("%s %v", r.Method, r.PostForm)
		}
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"bearer","expires_in":3600}`, tokenFor(clk.now, time.Hour))
	}))
	defer srv.Close()
	s := newSource(t, cfgFor(srv.URL), clk)
	first, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(47 * time.Minute) // before 0.8 × 60 min
	if again, _ := s.Token(context.Background()); again != first || calls.Load() != 1 {
		t.Fatalf("at 47 min: %d fetches, same token %v", calls.Load(), again == first)
	}
	clk.now = t0.Add(49 * time.Minute)
	if next, err := s.Token(context.Background()); err != nil || next == first || calls.Load() != 2 || s.Fetches() != 2 {
		t.Fatalf("at 49 min: %d fetches, new token %v, %v", calls.Load(), next != first, err)
	}
}

// TestRefreshTime: the Java client's window, jitter, minimum period and buffer.
func TestRefreshTime(t *testing.T) {
	def := conn.OAuthDefaults()
	for _, c := range []struct {
		name   string
		cfg    func(*conn.OAuth)
		life   time.Duration
		jitter float64
		want   time.Duration // after t0
	}{
		{"an hour: at 80 %", nil, time.Hour, 0, 48 * time.Minute},
		{"an hour, full jitter: at 85 %", nil, time.Hour, 1, 51 * time.Minute},
		{"ten minutes: kept 5 min (the buffer) before expiry", nil, 10 * time.Minute, 0, 5 * time.Minute},
		{"ten seconds: buffer and minimum ignored, 80 % of it", nil, 10 * time.Second, 0, 8 * time.Second},
		{"factor 0.5, no buffer", func(o *conn.OAuth) { o.WindowFactor, o.Buffer = 0.5, 0 }, time.Hour, 0, 30 * time.Minute},
		{"minimum period wins", func(o *conn.OAuth) { o.WindowFactor, o.MinPeriod, o.Buffer = 0.5, 40*time.Minute, 0 }, time.Hour, 0, 40 * time.Minute},
	} {
		cfg := def
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		got := refreshTime(cfg, t0, claims{iat: t0, exp: t0.Add(c.life)}, c.jitter)
		if got.Sub(t0) != c.want {
			t.Errorf("%s: refresh after %s, want %s", c.name, got.Sub(t0), c.want)
		}
	}
}

// TestEndpointFailures: each failure is one line naming the endpoint's setting and
// what to fix, with the provider's own words; never the secret, never the token;
// what may pass is retried with backoff, what cannot is not.
func TestEndpointFailures(t *testing.T) {
	closed := "http://" + testutil.ClosedAddr(t) + "/token"
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		url     string
		want    []string
		calls   int32 // -1: not counted
	}{
		{"unreachable", nil, closed, []string{"sasl.oauthbearer.token.endpoint.url (line 4) " + closed + ": cannot reach it:", "connection refused"}, -1},
		{"401", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(401)
			w.Write([]byte(`{"error":"invalid_client","error_description":"Client authentication failed."}`))
		}, "", []string{"answered 401 Unauthorized: invalid_client (Client authentication failed.): check clientId and sasl.jaas.config's clientSecret (line 5)"}, 1},
		{"400 unauthorized scope", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":"invalid_scope","error_description":"\u001b[31mscope kafka\u001b[0m"}`))
		}, "", []string{`answered 400 Bad Request: invalid_scope (\x1b[31mscope kafka\x1b[0m): check the client's grant types and scope`}, 1},
		{"500 every time: retried, then its error", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "db down", 500)
		}, "", []string{"answered 500 Internal Server Error: db down"}, 8},
		{"an HTML page", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("<html>sign in</html>"))
		}, "", []string{"answered 200 OK with something that is not a token's JSON"}, 1},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "https://elsewhere.example/token?code=x", http.StatusFound)
		}, "", []string{"answered 302 Found, a redirect, which is not followed", "(https://elsewhere.example/token)"}, 1},
		{"an answer over 1 MiB", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(`{"access_token":"`))
			w.Write(bytes.Repeat([]byte("a"), maxBody))
			w.Write([]byte(`"}`))
		}, "", []string{"the answer is over 1 MiB"}, 1},
		{"not a JWT", tokenHandler("opaque-token-abc"), "", []string{"the token is not a JWT: 1 parts separated by dots, not 3"}, 1},
		{"no sub", tokenHandler(jwt(map[string]any{"exp": t0.Add(time.Hour).Unix()})), "", []string{`the token has no "sub" claim naming its subject: set sasl.oauthbearer.sub.claim.name`}, 1},
		{"no exp", tokenHandler(jwt(map[string]any{"sub": "x"})), "", []string{`the token has no numeric "exp" (expiry) claim`}, 1},
		{"expired by our clock", tokenHandler(tokenFor(t0.Add(-2*time.Hour), time.Hour)), "",
			[]string{"the token expired at 2026-12-04T02:00:00Z by this machine's clock (now 2026-12-04T03:00:00Z): is either clock wrong? (sasl.oauthbearer.clock.skew.seconds=30)"}, 1},
		{"issued in the future", tokenHandler(tokenFor(t0.Add(10*time.Minute), time.Hour)), "",
			[]string{"the token was issued at 2026-12-04T03:10:00Z, in the future by this machine's clock"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			url := c.url
			if c.handler != nil {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1); c.handler(w, r) }))
				defer srv.Close()
				url = srv.URL + "/token"
			}
			clk := &fakeClock{now: t0}
			s := newSource(t, cfgFor(url), clk)
			_, err := s.Token(context.Background())
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "OAuth token from sasl.oauthbearer.token.endpoint.url (line 4) http://127.0.0.1:") {
				t.Errorf("does not name the setting and endpoint: %s", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%s\nwant %q in it", msg, w)
				}
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") || strings.ContainsRune(msg, 0x1b) {
				t.Errorf("secret, newline or escape in %q", msg)
			}
			if c.calls >= 0 && calls.Load() != c.calls {
				t.Errorf("%d requests, want %d", calls.Load(), c.calls)
			}
		})
	}
}

func tokenHandler(tok string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"access_token":%q}`, tok)
	}
}

// TestRefreshFailureKeepsAValidToken: a refresh that fails while the token held
// has not expired keeps it (as the Java client's refresh thread does); once it
// has, the error.
func TestRefreshFailureKeepsAValidToken(t *testing.T) {
	clk := &fakeClock{now: t0}
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintf(w, `{"access_token":%q}`, tokenFor(clk.now, time.Hour))
	}))
	defer srv.Close()
	s := newSource(t, cfgFor(srv.URL), clk)
	held, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	clk.now = t0.Add(50 * time.Minute)
	if got, err := s.Token(context.Background()); err != nil || got != held {
		t.Fatalf("refresh failed before expiry: %v, same token %v", err, got == held)
	}
	clk.now = t0.Add(61 * time.Minute)
	if _, err := s.Token(context.Background()); err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: maintenance") {
		t.Fatalf("after expiry: %v", err)
	}
	down.Store(false)
	if _, err := s.Token(context.Background()); err != nil {
		t.Fatalf("endpoint back: %v", err)
	}
}

// TestHeaderURLEncode: the credentials go raw into the Basic header, as the
// Java client sends them, unless sasl.oauthbearer.header.urlencode=true.
func TestHeaderURLEncode(t *testing.T) {
	raw := "Basic " + base64.StdEncoding.EncodeToString([]byte("id:"+secret))
	enc := "Basic " + base64.StdEncoding.EncodeToString([]byte("id:s3cr3t%2B%2F%3D%C3%BC"))
	if got := basicAuth("id", secret, false); got != raw {
		t.Errorf("raw: %s", got)
	}
	if got := basicAuth("id", secret, true); got != enc {
		t.Errorf("urlencoded: %s", got)
	}
}

// TestAudienceSent: the JAAS option audience goes into the form.
func TestAudienceSent(t *testing.T) {
	clk := &fakeClock{now: t0}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		if r.PostForm.Get("audience") != "kafka-prod" {
			http.Error(w, "no audience", 400)
			return
		}
		fmt.Fprintf(w, `{"access_token":%q}`, tokenFor(clk.now, time.Hour))
	}))
	defer srv.Close()
	cfg := cfgFor(srv.URL)
	cfg.Audience = "kafka-prod"
	if _, err := newSource(t, cfg, clk).Token(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestFileToken: a file: URL is a file holding the token, read again at each refresh.
func TestFileToken(t *testing.T) {
	clk := &fakeClock{now: t0}
	path := filepath.Join(t.TempDir(), "token.jwt")
	os.WriteFile(path, []byte(tokenFor(t0, 10*time.Second)+"\n"), 0o600)
	cfg := cfgFor("file:" + path)
	s := newSource(t, cfg, clk)
	first, err := s.Token(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	clk.now = t0.Add(9 * time.Second)
	os.WriteFile(path, []byte(tokenFor(clk.now, 10*time.Second)), 0o600)
	if next, err := s.Token(context.Background()); err != nil || next == first {
		t.Fatalf("the file was not read again: %v", err)
	}
	cfg = cfgFor("file:" + filepath.Join(t.TempDir(), "missing"))
	if _, err := newSource(t, cfg, clk).Token(context.Background()); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("missing file: %v", err)
	}
}

// TestSlowEndpoint: sasl.login.read.timeout.ms bounds a token request to an
// endpoint that accepts and never answers; the error says so.
func TestSlowEndpoint(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	cfg := cfgFor(srv.URL)
	cfg.ReadTimeout, cfg.BackoffMax = 200*time.Millisecond, 0
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Token(context.Background())
	if err == nil || !strings.Contains(err.Error(), "timeout awaiting response headers") || time.Since(start) > 5*time.Second {
		t.Fatalf("after %s: %v", time.Since(start), err)
	}
}
