package conn

import "time"

// OAuth is OAUTHBEARER with tokens fetched from an OAuth 2 token endpoint by
// the client credentials grant (KIP-768), read from a Java client's
// properties as the Java client reads them. Durations and factors hold the
// Java client's defaults when the file leaves them out (OAuthDefaults).
type OAuth struct {
	// TokenURL is sasl.oauthbearer.token.endpoint.url: http(s), or a file
	// (file:/path) holding a token, read again at every refresh.
	TokenURL     string
	ClientID     string
	ClientSecret Secret
	Scope        string
	// Audience is sent as the audience parameter when set (the JAAS option
	// audience: Auth0, Keycloak; the Java client has no such option).
	Audience string
	// Extensions are the SASL extensions (JAAS options extension_NAME).
	Extensions map[string]string
	// URLEncodeHeader is sasl.oauthbearer.header.urlencode.
	URLEncodeHeader bool
	// CAFile or CAPEM verify an https token endpoint (the JAAS option
	// ssl.truststore.location, else the client's truststore); empty: the
	// system roots.
	CAFile string
	CAPEM  []byte

	// sasl.login.refresh.*: when a token is refreshed, as the Java client's
	// ExpiringCredentialRefreshingLogin computes it.
	WindowFactor, WindowJitter float64
	MinPeriod, Buffer          time.Duration
	// sasl.login.retry.backoff.ms and .max.ms.
	Backoff, BackoffMax time.Duration
	// sasl.login.connect.timeout.ms and read.timeout.ms (0: none).
	ConnectTimeout, ReadTimeout time.Duration
	// The claims the token must hold, and the clock skew allowed.
	SubClaim, ScopeClaim string
	ClockSkew            time.Duration

	// Origin names the settings in messages: "sasl.oauthbearer.token.endpoint.url (line 4)".
	Origin string
	// SecretOrigin names where the client secret came from, for messages
	// about it: "sasl.jaas.config's clientSecret (line 5)".
	SecretOrigin string
}

// OAuthDefaults are the Java client's defaults.
func OAuthDefaults() OAuth {
	return OAuth{
		WindowFactor: 0.8, WindowJitter: 0.05, MinPeriod: 60 * time.Second, Buffer: 300 * time.Second,
		Backoff: 100 * time.Millisecond, BackoffMax: 10 * time.Second,
		SubClaim: "sub", ScopeClaim: "scope", ClockSkew: 30 * time.Second,
	}
}
