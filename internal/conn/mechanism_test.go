package conn

import (
	"errors"
	"testing"
)

func TestParseMechanism(t *testing.T) {
	for _, c := range []struct {
		in, want string
		err      error
	}{
		{"PLAIN", Plain, nil},
		{"plain", Plain, nil},
		{" scram-sha-256\t", ScramSHA256, nil},
		{"Scram-Sha-512", ScramSHA512, nil},
		{"oauthbearer", OAuthBearer, nil},
		{"GSSAPI", GSSAPI, nil},
		{" gssapi ", GSSAPI, nil},
		{"SCRAM-SHA-1", "", ErrUnknownMechanism},
		{"SCRAM SHA 256", "", ErrUnknownMechanism},
		{"", "", ErrUnknownMechanism},
	} {
		got, err := ParseMechanism(c.in)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("ParseMechanism(%q) = %q, %v; want %q, %v", c.in, got, err, c.want, c.err)
		}
	}
}

// The help and every message name the mechanisms from the one list, in
// the words the messages have always used.
func TestMechanismWords(t *testing.T) {
	if want := "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER, GSSAPI or AWS_MSK_IAM"; MechanismChoices != want {
		t.Errorf("MechanismChoices = %q, want %q", MechanismChoices, want)
	}
	for _, m := range Mechanisms() {
		if got, err := ParseMechanism(m); got != m || err != nil {
			t.Errorf("ParseMechanism(%q) = %q, %v: a listed mechanism is refused", m, got, err)
		}
	}
	Mechanisms()[0] = "changed"
	if Mechanisms()[0] != Plain {
		t.Error("Mechanisms hands out the list itself")
	}
}
