package integration

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// EnvHydra names the Ory Hydra binary (scripts/oauth-server --build); without it the tests look
// where that script builds it.
const EnvHydra = "TXNSCOPE_HYDRA"

// IdP is a real OAuth 2 / OpenID Connect server (Ory Hydra) on 127.0.0.1, in memory, issuing JWT
// access tokens by the client credentials grant to one client it was given.
type IdP struct {
	Issuer, TokenURL, JWKSURL string
	ClientID, ClientSecret    string
	LogFile                   string
}

// StartIdP starts Hydra with access tokens that live ttl, and registers a client allowed the
// client credentials grant and the scope "kafka". It is stopped when the test ends; without the
// binary the test is skipped, or fails under CI=true.
func StartIdP(t *testing.T, ttl time.Duration) *IdP {
	t.Helper()
	bin := os.Getenv(EnvHydra)
	if bin == "" {
		bin = filepath.Join(cacheHome(), "txnscope", "hydra-v2.3.0", "hydra")
	}
	if _, err := os.Stat(bin); err != nil {
		missing(t, "no Ory Hydra at "+bin+": run scripts/oauth-server --build (or set "+EnvHydra+")")
	}
	ports, err := freePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	pub, admin := "127.0.0.1:"+strconv.Itoa(ports[0]), "127.0.0.1:"+strconv.Itoa(ports[1])
	idp := &IdP{Issuer: "http://" + pub, TokenURL: "http://" + pub + "/oauth2/token", JWKSURL: "http://" + pub + "/.well-known/jwks.json",
		LogFile: filepath.Join(t.TempDir(), "hydra.log")}
	log, err := os.Create(idp.LogFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "all", "--dev")
	cmd.Env = append(os.Environ(),
		"DSN=memory",
		"SERVE_PUBLIC_HOST=127.0.0.1", "SERVE_PUBLIC_PORT="+strconv.Itoa(ports[0]),
		"SERVE_ADMIN_HOST=127.0.0.1", "SERVE_ADMIN_PORT="+strconv.Itoa(ports[1]),
		"URLS_SELF_ISSUER="+idp.Issuer,
		"STRATEGIES_ACCESS_TOKEN=jwt",
		"TTL_ACCESS_TOKEN="+ttl.String(),
		"SECRETS_SYSTEM="+randomHex(t, 24),
		"LOG_LEVEL=warn")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Hydra: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			data, _ := os.ReadFile(idp.LogFile)
			t.Logf("Hydra's log (%s):\n%s", idp.LogFile, tail(string(data), 40))
		}
	})
	if err := waitHTTP("http://"+admin+"/health/ready", 30*time.Second); err != nil {
		t.Fatalf("Hydra not ready: %v", err)
	}
	idp.ClientID, idp.ClientSecret = createClient(t, "http://"+admin, randomHex(t, 16))
	idp.Issuer = issuerOf(t, idp)
	return idp
}

// issuerOf is the "iss" of a token the IdP issues (Hydra may normalize the URL it was given).
func issuerOf(t *testing.T, idp *IdP) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, idp.TokenURL, strings.NewReader("grant_type=client_credentials&scope=kafka"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(idp.ClientID, idp.ClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a first token: %v", err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a first token: %s, %v", resp.Status, err)
	}
	parts := strings.Split(tok.AccessToken, ".")
	if len(parts) != 3 {
		t.Fatalf("Hydra's access token is not a JWT (STRATEGIES_ACCESS_TOKEN=jwt not taken?)")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Iss string `json:"iss"`
	}
	if err != nil || json.Unmarshal(payload, &claims) != nil || claims.Iss == "" {
		t.Fatalf("Hydra's access token has no iss: %v", err)
	}
	return claims.Iss
}

func cacheHome() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache")
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func waitHTTP(url string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createClient registers a confidential client through Hydra's admin API.
func createClient(t *testing.T, admin, secret string) (id, sec string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"client_name":                "txnscope",
		"client_secret":              secret,
		"grant_types":                []string{"client_credentials"},
		"token_endpoint_auth_method": "client_secret_basic",
		"scope":                      "kafka",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, admin+"/admin/clients", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("creating the OAuth client: %v", err)
	}
	defer resp.Body.Close()
	var c struct {
		ID     string `json:"client_id"`
		Secret string `json:"client_secret"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode/100 != 2 || c.ID == "" {
		t.Fatalf("creating the OAuth client: %s, %v", resp.Status, err)
	}
	if c.Secret == "" {
		c.Secret = secret
	}
	return c.ID, c.Secret
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
