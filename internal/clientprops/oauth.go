package clientprops

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/txnscope/txnscope/internal/conn"
)

// The Java client's login callback handler that fetches tokens (3.1+ under
// the first name, before 3.4 under the second).
var oauthHandlers = []string{
	"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
	"org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerLoginCallbackHandler",
}

const (
	handlerKey  = "sasl.login.callback.handler.class"
	endpointKey = "sasl.oauthbearer.token.endpoint.url"
)

// oauthFrom reads the client credentials grant of an OAUTHBEARER client
// whose login callback handler fetches tokens, as the Java client does:
// clientId, clientSecret and scope from the Kafka 4.1 properties or else
// the JAAS options, sasl.login.refresh.* and sasl.login.retry.* for when to
// fetch, and the JAAS ssl.* options (or the client's truststore) for TLS to
// the endpoint. It returns nil when the handler is not set: the Java client
// then makes an unsecured token, and so the token comes from the command line.
func oauthFrom(m map[string]Entry, j jaas, je Entry, tls *conn.TLS) (*conn.OAuth, error) {
	h, hasHandler := m[handlerKey]
	ep, hasEndpoint := m[endpointKey]
	if !hasHandler {
		if hasEndpoint {
			return nil, fmt.Errorf("line %d: %s needs %s=%s (without it the Java client makes an unsecured token and never asks the endpoint)",
				ep.Line, endpointKey, handlerKey, oauthHandlers[0])
		}
		return nil, nil
	}
	if !isOAuthHandler(strings.TrimSpace(h.Value)) {
		return nil, fmt.Errorf("line %d: %s=%s is not supported: use %s (OAuth client credentials)", h.Line, handlerKey, short(h.Value), oauthHandlers[0])
	}
	if !hasEndpoint || strings.TrimSpace(ep.Value) == "" {
		return nil, fmt.Errorf("line %d: %s needs %s, the token endpoint's URL", h.Line, handlerKey, endpointKey)
	}
	o := conn.OAuthDefaults()
	o.TokenURL = strings.TrimSpace(ep.Value)
	o.Origin = fmt.Sprintf("%s (line %d)", endpointKey, ep.Line)
	u, err := url.Parse(o.TokenURL)
	switch {
	case err != nil || u.Host == "" && u.Scheme != "file":
		return nil, fmt.Errorf("line %d: %s=%s is not a URL: use https://HOST/PATH, or file:/PATH for a file holding the token", ep.Line, endpointKey, short(o.TokenURL))
	case u.Scheme == "file":
		if u.Path == "" {
			return nil, fmt.Errorf("line %d: %s=%s names no file: use file:/PATH", ep.Line, endpointKey, short(o.TokenURL))
		}
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, fmt.Errorf("line %d: %s=%s: the scheme must be https, http or file", ep.Line, endpointKey, short(o.TokenURL))
	case u.User != nil:
		return nil, fmt.Errorf("line %d: %s holds a user name or password: put the client's id and secret in sasl.jaas.config", ep.Line, endpointKey)
	}
	if err := clientCredentials(m, j, je, &o, u.Scheme == "file"); err != nil {
		return nil, err
	}
	if err := loginTimings(m, &o); err != nil {
		return nil, err
	}
	if err := endpointTLS(j, je, tls, &o); err != nil {
		return nil, err
	}
	for k, v := range j.options {
		if name, ok := strings.CutPrefix(k, "extension_"); ok && name != "" {
			if o.Extensions == nil {
				o.Extensions = map[string]string{}
			}
			o.Extensions[name] = v
		}
	}
	return &o, nil
}

func isOAuthHandler(class string) bool {
	for _, h := range oauthHandlers {
		if class == h {
			return true
		}
	}
	return false
}

// clientCredentials takes the client's id, secret and scope from the Kafka
// 4.1 properties, each else from its JAAS option; a file token needs none.
func clientCredentials(m map[string]Entry, j jaas, je Entry, o *conn.OAuth, file bool) error {
	pick := func(prop, option string) (string, string) {
		if e, ok := m[prop]; ok {
			return e.Value, fmt.Sprintf("%s (line %d)", prop, e.Line)
		}
		if v, ok := j.options[option]; ok {
			return v, fmt.Sprintf("sasl.jaas.config's %s (line %d)", option, je.Line)
		}
		return "", ""
	}
	o.ClientID, _ = pick("sasl.oauthbearer.client.credentials.client.id", "clientId")
	secret, from := pick("sasl.oauthbearer.client.credentials.client.secret", "clientSecret")
	o.ClientSecret, o.SecretOrigin = conn.Secret(secret), from
	o.Scope, _ = pick("sasl.oauthbearer.scope", "scope")
	o.Audience = j.options["audience"]
	if file {
		return nil
	}
	if o.ClientID == "" || secret == "" {
		return fmt.Errorf("line %d: the client credentials grant needs clientId=\"...\" and clientSecret=\"...\" in sasl.jaas.config "+
			"(or sasl.oauthbearer.client.credentials.client.id and .client.secret)", je.Line)
	}
	return nil
}

// loginTimings reads sasl.login.* and the claims' settings, refusing what
// the Java client refuses (its ranges).
func loginTimings(m map[string]Entry, o *conn.OAuth) error {
	for _, f := range []struct {
		key      string
		min, max float64
		set      func(float64)
	}{
		{"sasl.login.refresh.window.factor", 0.5, 1, func(v float64) { o.WindowFactor = v }},
		{"sasl.login.refresh.window.jitter", 0, 0.25, func(v float64) { o.WindowJitter = v }},
		{"sasl.login.refresh.min.period.seconds", 0, 900, func(v float64) { o.MinPeriod = seconds(v) }},
		{"sasl.login.refresh.buffer.seconds", 0, 3600, func(v float64) { o.Buffer = seconds(v) }},
		{"sasl.login.retry.backoff.ms", 0, math.MaxInt32, func(v float64) { o.Backoff = millis(v) }},
		{"sasl.login.retry.backoff.max.ms", 0, math.MaxInt32, func(v float64) { o.BackoffMax = millis(v) }},
		{"sasl.login.connect.timeout.ms", 0, math.MaxInt32, func(v float64) { o.ConnectTimeout = millis(v) }},
		{"sasl.login.read.timeout.ms", 0, math.MaxInt32, func(v float64) { o.ReadTimeout = millis(v) }},
		{"sasl.oauthbearer.clock.skew.seconds", 0, math.MaxInt32, func(v float64) { o.ClockSkew = seconds(v) }},
	} {
		e, ok := m[f.key]
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(e.Value), 64)
		if err != nil || math.IsNaN(v) || v < f.min || v > f.max {
			return fmt.Errorf("line %d: %s=%s is not a number from %g to %g", e.Line, f.key, short(e.Value), f.min, f.max)
		}
		f.set(v)
	}
	for key, dst := range map[string]*string{"sasl.oauthbearer.sub.claim.name": &o.SubClaim, "sasl.oauthbearer.scope.claim.name": &o.ScopeClaim} {
		if e, ok := m[key]; ok {
			if *dst = strings.TrimSpace(e.Value); *dst == "" {
				return fmt.Errorf("line %d: %s is empty", e.Line, key)
			}
		}
	}
	if e, ok := m["sasl.oauthbearer.header.urlencode"]; ok {
		switch strings.ToLower(strings.TrimSpace(e.Value)) {
		case "true":
			o.URLEncodeHeader = true
		case "false":
		default:
			return fmt.Errorf("line %d: sasl.oauthbearer.header.urlencode=%s is not true or false", e.Line, short(e.Value))
		}
	}
	return nil
}

func seconds(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
func millis(v float64) time.Duration  { return time.Duration(v * float64(time.Millisecond)) }

// endpointTLS takes the CA for an https token endpoint from the JAAS
// options, as the Java client does (ssl.truststore.*), else from the
// client's own truststore, else the system roots.
func endpointTLS(j jaas, je Entry, tls *conn.TLS, o *conn.OAuth) error {
	loc, hasLoc := j.options["ssl.truststore.location"]
	if !hasLoc {
		if tls != nil {
			o.CAFile, o.CAPEM = tls.CAFile, tls.CAPEM
		}
		return nil
	}
	if typ := j.options["ssl.truststore.type"]; !strings.EqualFold(strings.TrimSpace(typ), "PEM") {
		return fmt.Errorf("line %d: sasl.jaas.config's ssl.truststore.location for the token endpoint needs ssl.truststore.type=\"PEM\": %s",
			je.Line, truststoreHint)
	}
	if o.CAFile = strings.TrimSpace(loc); o.CAFile == "" {
		return fmt.Errorf("line %d: sasl.jaas.config's ssl.truststore.location is empty", je.Line)
	}
	return nil
}
