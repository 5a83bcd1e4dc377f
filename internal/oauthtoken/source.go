// Package oauthtoken fetches OAUTHBEARER tokens from an OAuth 2 token
// endpoint by the client credentials grant, as the Java client's
// OAuthBearerLoginCallbackHandler does, and keeps one until the Java
// client's refresh time. It speaks HTTP to the identity provider, never
// Kafka; kafkaadmin hands its tokens to the SASL exchange.
package oauthtoken

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
	"github.com/txnscope/txnscope/internal/escape"
	"github.com/txnscope/txnscope/internal/inputfile"
)

// maxBody bounds what the endpoint may answer: a token is a few KiB.
const maxBody = 1 << 20

// Source hands out a token, fetching a new one when the one it holds is due
// for refresh. One Source serves every connection of a client, so that a
// client with many brokers asks the endpoint once per token lifetime.
type Source struct {
	cfg    conn.OAuth
	where  string // the endpoint, for messages: origin and URL
	hc     *http.Client
	now    func() time.Time
	jitter func() float64 // in [0, 1)
	sleep  func(context.Context, time.Duration) error

	mu        sync.Mutex
	token     string
	exp       time.Time
	refreshAt time.Time
	fetches   int
}

// New makes a Source; a bad CA file is its only error.
func New(cfg conn.OAuth) (*Source, error) {
	s := &Source{cfg: cfg, now: time.Now, jitter: rand.Float64, sleep: sleepCtx}
	s.where = cfg.Origin + " " + escape.Line(redactURL(cfg.TokenURL))
	if strings.HasPrefix(cfg.TokenURL, "file:") {
		return s, nil
	}
	roots, err := caPool(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Origin, err)
	}
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		ResponseHeaderTimeout: cfg.ReadTimeout,
		MaxIdleConns:          2,
		IdleConnTimeout:       time.Minute,
	}
	s.hc = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
		// A redirect would resend the client's credentials elsewhere.
		return http.ErrUseLastResponse
	}}
	return s, nil
}

func caPool(cfg conn.OAuth) (*x509.CertPool, error) {
	pem := cfg.CAPEM
	if cfg.CAFile != "" {
		var err error
		if pem, err = inputfile.Read(cfg.CAFile); err != nil {
			return nil, fmt.Errorf("the token endpoint's CA file: %w", err)
		}
	}
	if len(pem) == 0 {
		return nil, nil // the system roots
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("the token endpoint's CA holds no PEM certificate")
	}
	return pool, nil
}

// Fetches counts the tokens fetched so far.
func (s *Source) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetches
}

// Token returns the token to authenticate with: the one held until its
// refresh time, then a new one. When a refresh fails, the one held is still
// used while it has not expired (the Java client keeps its credential while
// its refresh thread retries); past that the error is returned.
func (s *Source) Token(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if s.token != "" && now.Before(s.refreshAt) {
		return s.token, nil
	}
	tok, c, err := s.fetch(ctx)
	if err != nil {
		if s.token != "" && now.Before(s.exp) {
			return s.token, nil
		}
		return "", fmt.Errorf("OAuth token from %s: %w", s.where, err)
	}
	s.fetches++
	s.token, s.exp = tok, c.exp
	s.refreshAt = refreshTime(s.cfg, now, c, s.jitter())
	return s.token, nil
}

// refreshTime is when to fetch the next token, as the Java client's
// ExpiringCredentialRefreshingLogin computes it: at the window factor (plus
// jitter) of the token's lifetime, no sooner than the minimum period from
// now and no later than the buffer before expiry; when those two do not fit
// in what is left of the lifetime, at the window factor of what is left.
func refreshTime(cfg conn.OAuth, now time.Time, c claims, jitter float64) time.Time {
	factor := cfg.WindowFactor + cfg.WindowJitter*jitter
	if now.Add(cfg.MinPeriod + cfg.Buffer).After(c.exp) {
		return now.Add(time.Duration(float64(c.exp.Sub(now)) * factor))
	}
	start := now
	if !c.iat.IsZero() && c.iat.Before(now) {
		start = c.iat
	}
	at := start.Add(time.Duration(float64(c.exp.Sub(start)) * factor))
	if at.Before(now.Add(cfg.MinPeriod)) {
		at = now.Add(cfg.MinPeriod)
	}
	if at.After(c.exp.Add(-cfg.Buffer)) {
		at = c.exp.Add(-cfg.Buffer)
	}
	return at
}

// fetch gets a token, retrying what may pass (no answer, a 5xx, a 429) with
// the Java client's backoff: from sasl.login.retry.backoff.ms, doubling,
// until sasl.login.retry.backoff.max.ms have been waited in all.
func (s *Source) fetch(ctx context.Context) (string, claims, error) {
	wait, waited := s.cfg.Backoff, time.Duration(0)
	for {
		tok, retry, err := s.fetchOnce(ctx)
		if err == nil {
			c, err := s.check(tok)
			return tok, c, err
		}
		if !retry || waited >= s.cfg.BackoffMax || ctx.Err() != nil {
			return "", claims{}, err
		}
		wait = min(wait, s.cfg.BackoffMax-waited)
		if s.sleep(ctx, wait) != nil {
			return "", claims{}, err
		}
		waited += wait
		wait *= 2
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Source) fetchOnce(ctx context.Context) (tok string, retry bool, err error) {
	if path, ok := strings.CutPrefix(s.cfg.TokenURL, "file:"); ok {
		if u, err := url.Parse(s.cfg.TokenURL); err == nil && u.Path != "" {
			path = u.Path
		}
		data, err := inputfile.Read(path)
		if err != nil {
			return "", false, err
		}
		return strings.TrimSpace(string(data)), false, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if s.cfg.Scope != "" {
		form.Set("scope", s.cfg.Scope)
	}
	if s.cfg.Audience != "" {
		form.Set("audience", s.cfg.Audience)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set("Authorization", basicAuth(s.cfg.ClientID, s.cfg.ClientSecret.Reveal(), s.cfg.URLEncodeHeader))
	resp, err := s.hc.Do(req)
	if err != nil {
		return "", true, reachErr(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	switch {
	case err != nil:
		return "", true, fmt.Errorf("reading the answer: %w", reachErr(err))
	case len(body) > maxBody:
		return "", false, errors.New("the answer is over 1 MiB")
	case resp.StatusCode/100 == 3:
		return "", false, fmt.Errorf("answered %s, a redirect, which is not followed (it would carry the client's secret elsewhere): use the URL it names (%s)",
			resp.Status, escape.Line(redactURL(resp.Header.Get("Location"))))
	case resp.StatusCode/100 != 2:
		retry := resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests
		return "", retry, statusErr(resp, body, s.cfg.SecretOrigin)
	}
	var ans struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return "", false, fmt.Errorf("answered %s with something that is not a token's JSON", resp.Status)
	}
	if ans.AccessToken == "" {
		return "", false, fmt.Errorf("answered %s without an access_token", resp.Status)
	}
	return ans.AccessToken, false, nil
}

// basicAuth is the client's credentials as the Java client sends them:
// URL-encoded first only with sasl.oauthbearer.header.urlencode=true.
func basicAuth(id, secret string, urlencode bool) string {
	if urlencode {
		id, secret = url.QueryEscape(id), url.QueryEscape(secret)
	}
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(id+":"+secret))
}

// statusErr says what the endpoint refused, in its own words (RFC 6749's
// error and error_description) when it gives them.
func statusErr(resp *http.Response, body []byte, secretOrigin string) error {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	why := ""
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		why = ": " + e.Error
		if e.Description != "" {
			why += " (" + e.Description + ")"
		}
	} else if text := strings.TrimSpace(string(body)); text != "" && len(text) <= 200 && !strings.Contains(text, "<") {
		why = ": " + text
	}
	why = escape.Line(why)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("answered %s%s: check clientId and %s", resp.Status, why, secretOrigin)
	case http.StatusBadRequest:
		return fmt.Errorf("answered %s%s: check the client's grant types and scope", resp.Status, why)
	}
	return fmt.Errorf("answered %s%s", resp.Status, why)
}

// reachErr is err without the URL net/http puts in front (the message
// already names the endpoint).
func reachErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("cannot reach it: %w", ue.Err)
	}
	return err
}

// redactURL drops a URL's query, where some providers take secrets.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(not a URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
