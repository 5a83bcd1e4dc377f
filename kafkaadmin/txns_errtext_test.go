package kafkaadmin

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestErrTextKeepsTheBrokersReason(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"code only", kerr.TopicAuthorizationFailed,
			"TOPIC_AUTHORIZATION_FAILED: Not authorized to access topics: [Topic authorization failed.]"},
		{"broker message appended by kgo", fmt.Errorf("%w: %s", kerr.SaslAuthenticationFailed,
			"Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"),
			"SASL_AUTHENTICATION_FAILED: SASL Authentication failed. Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"},
		{"wrapped again", fmt.Errorf("sasl: %w", fmt.Errorf("%w: %s", kerr.SaslAuthenticationFailed, "bad user")),
			"SASL_AUTHENTICATION_FAILED: SASL Authentication failed. bad user"},
		{"deadline", context.DeadlineExceeded, "no answer within the timeout"},
		{"other", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), "dial tcp 127.0.0.1:1: connect: connection refused"},
	}
	for _, c := range cases {
		if got := errText(c.err); got != c.want {
			t.Errorf("%s: errText = %q, want %q", c.name, got, c.want)
		}
	}
}
