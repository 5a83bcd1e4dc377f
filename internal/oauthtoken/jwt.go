package oauthtoken

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// claims are what txnscope reads of a token: when it expires, when it was
// issued (zero when it does not say).
type claims struct {
	exp, iat time.Time
}

// check reads tok as the Java client's ClientJwtValidator does before using
// it: a JWT of three parts whose payload holds exp and the subject claim (and
// a scope claim of the right kind when present). It does not verify the
// signature: the broker does. A token already expired, or issued in the
// future, by this machine's clock (past the allowed skew) is refused, saying
// so: it would only fail at the broker, without a reason.
func (s *Source) check(tok string) (claims, error) {
	payload, err := jwtPayload(tok)
	if err != nil {
		return claims{}, fmt.Errorf("the token is not a JWT: %w", err)
	}
	var c claims
	exp, ok := numeric(payload["exp"])
	if !ok {
		return claims{}, errors.New(`the token has no numeric "exp" (expiry) claim`)
	}
	c.exp = unix(exp)
	if iat, ok := numeric(payload["iat"]); ok {
		c.iat = unix(iat)
	} else if _, present := payload["iat"]; present {
		return claims{}, errors.New(`the token's "iat" claim is not a number`)
	}
	sub, _ := payload[s.cfg.SubClaim].(string)
	if strings.TrimSpace(sub) == "" {
		return claims{}, fmt.Errorf("the token has no %q claim naming its subject: set sasl.oauthbearer.sub.claim.name to the claim the provider uses", s.cfg.SubClaim)
	}
	switch sc := payload[s.cfg.ScopeClaim].(type) {
	case nil, string:
	case []any:
		for _, v := range sc {
			if _, ok := v.(string); !ok {
				return claims{}, fmt.Errorf("the token's %q claim is not a list of names", s.cfg.ScopeClaim)
			}
		}
	default:
		return claims{}, fmt.Errorf("the token's %q claim is neither a name nor a list of names", s.cfg.ScopeClaim)
	}
	now := s.now()
	skew := fmt.Sprintf("sasl.oauthbearer.clock.skew.seconds=%d", int64(s.cfg.ClockSkew/time.Second))
	if !c.exp.After(now.Add(-s.cfg.ClockSkew)) {
		return claims{}, fmt.Errorf("the token expired at %s by this machine's clock (now %s): is either clock wrong? (%s)",
			c.exp.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), skew)
	}
	if !c.iat.IsZero() && c.iat.After(now.Add(s.cfg.ClockSkew)) {
		return claims{}, fmt.Errorf("the token was issued at %s, in the future by this machine's clock (now %s): is either clock wrong? (%s)",
			c.iat.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), skew)
	}
	return c, nil
}

// jwtPayload decodes a compact JWT's payload; the message never quotes it.
func jwtPayload(tok string) (map[string]any, error) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("%d parts separated by dots, not 3 (header, payload, signature)", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, errors.New("its payload is not base64url")
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil || payload == nil {
		return nil, errors.New("its payload is not a JSON object")
	}
	return payload, nil
}

// numeric reads a NumericDate claim (seconds since the epoch).
func numeric(v any) (float64, bool) {
	f, ok := v.(float64)
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e11 {
		return 0, false
	}
	return f, true
}

func unix(sec float64) time.Time {
	whole := math.Floor(sec)
	return time.Unix(int64(whole), int64((sec-whole)*1e9))
}
