package kafkaadmin

// Security says how to encrypt and authenticate; the zero value is PLAINTEXT
// without authentication.
type Security struct {
	// TLS is nil for a plaintext connection.
	TLS *TLS
	// SASL is nil when the cluster does not ask for authentication.
	SASL *SASL
}

// TLS holds PEM file paths, read when the client is created.
type TLS struct {
	CAFile   string // empty: the system roots
	CertFile string // client certificate for mutual TLS (with KeyFile)
	KeyFile  string
	// ServerName overrides the name checked in the broker's certificate
	// (empty: the host of the address dialled).
	ServerName string
	// InsecureSkipVerify accepts any broker certificate; the UI warns about it.
	InsecureSkipVerify bool
}

// SASL mechanisms txnscope speaks, with Kafka's names.
const (
	Plain       = "PLAIN"
	ScramSHA256 = "SCRAM-SHA-256"
	ScramSHA512 = "SCRAM-SHA-512"
	OAuthBearer = "OAUTHBEARER"
)

// SASL is one mechanism with its credentials.
type SASL struct {
	Mechanism string
	Username  string
	// Password is the password, or the static token for OAUTHBEARER.
	Password Secret
}

// Secret is a string that never prints itself: fmt, logs and error messages
// see "[redacted]".
type Secret string

func (Secret) String() string   { return "[redacted]" }
func (Secret) GoString() string { return "[redacted]" }

// Reveal is the only way to the value, for the SASL exchange itself.
func (s Secret) Reveal() string { return string(s) }
