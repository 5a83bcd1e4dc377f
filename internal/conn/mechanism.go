package conn

import (
	"errors"
	"slices"
	"strings"
)

// SASL mechanisms txnscope speaks, with Kafka's names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
	// GSSAPI is Kerberos: its login comes only from a properties file's
	// Krb5LoginModule, never from flags.
	GSSAPI = "GSSAPI"
	// AWSMSKIAM is Amazon MSK's IAM authentication, from a properties file.
	AWSMSKIAM = "AWS_MSK_IAM"
)

// mechanisms is the one list of them; everything that names them all (help,
// messages) is made from it.
var mechanisms = []string{Plain, ScramSHA256, ScramSHA512, OAuthBearer, GSSAPI, AWSMSKIAM}

// MechanismChoices names the mechanisms for a message or a flag's help:
// "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER".
var MechanismChoices = strings.Join(mechanisms[:len(mechanisms)-1], ", ") + " or " + mechanisms[len(mechanisms)-1]

// Mechanisms lists the mechanisms txnscope speaks (a copy: callers may keep it).
func Mechanisms() []string { return slices.Clone(mechanisms) }

// ErrUnknownMechanism is ParseMechanism's error for a name it does not
// know; callers quote the name as given in their own words.
var ErrUnknownMechanism = errors.New("unknown SASL mechanism")

// ParseMechanism returns the mechanism name refers to, in Kafka's spelling:
// case and surrounding space do not matter, as in the Java client.
func ParseMechanism(name string) (string, error) {
	m := strings.ToUpper(strings.TrimSpace(name))
	if slices.Contains(mechanisms, m) {
		return m, nil
	}
	return "", ErrUnknownMechanism
}
