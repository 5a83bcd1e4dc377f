package kafkaadmin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/txnscope/txnscope/internal/conn"
)

const (
	awsKey    = "AKIDEXAMPLE"
	awsSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	awsToken  = "session-token-example"
	mskHost   = "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com"
)

// awsEnv gives the SDK's chain static credentials from the environment and
// nothing else (no files, no instance metadata).
func awsEnv(t *testing.T, key, secret, token string) {
	t.Setenv("AWS_ACCESS_KEY_ID", key)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", token)
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_PROFILE", "")
}

// TestSigV4PublishedExample: the Signature V4 signer txnscope's MSK tokens
// rest on reproduces AWS's published example (IAM ListUsers, 2015-08-30).
func TestSigV4PublishedExample(t *testing.T) {
	req, _ := http.NewRequest(http.MethodGet, "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", nil)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	at := time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)
	creds := aws.Credentials{AccessKeyID: awsKey, SecretAccessKey: awsSecret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, emptyHash, "iam", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
	const want = "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
	if got := req.Header.Get("Authorization"); !strings.HasSuffix(got, want) {
		t.Errorf("Authorization %q\nwant it to end %s", got, want)
	}
}

// TestMSKIAMPayload: AWS_MSK_IAM's first message, as franz-go's sasl/aws
// signs it for a broker of eu-west-1 with the chain's credentials, is the
// JSON the MSK library sends, and its signature is the one the AWS SDK's
// own signer computes for the same presigned kafka-cluster:Connect.
func TestMSKIAMPayload(t *testing.T) {
	awsEnv(t, awsKey, awsSecret, awsToken)
	m, err := awsMechanism(conn.AWSIAM{Origin: "sasl.jaas.config (line 4)"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "AWS_MSK_IAM" {
		t.Fatalf("mechanism %s", m.Name())
	}
	_, first, err := m.Authenticate(context.Background(), mskHost+":9098")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]string
	if err := json.Unmarshal(first, &p); err != nil {
		t.Fatalf("not JSON: %s", first)
	}
	at, err := time.Parse("20060102T150405Z", p["x-amz-date"])
	if err != nil {
		t.Fatalf("x-amz-date %q", p["x-amz-date"])
	}
	date := at.Format("20060102")
	for k, want := range map[string]string{
		"version": "2020_10_22", "host": mskHost, "action": "kafka-cluster:Connect", "x-amz-algorithm": "AWS4-HMAC-SHA256",
		"x-amz-credential": awsKey + "/" + date + "/eu-west-1/kafka-cluster/aws4_request", "x-amz-signedheaders": "host",
		"x-amz-expires": "900", "x-amz-security-token": awsToken,
	} {
		if p[k] != want {
			t.Errorf("%s = %q, want %q", k, p[k], want)
		}
	}
	if !strings.HasPrefix(p["user-agent"], "txnscope/") {
		t.Errorf("user-agent %q", p["user-agent"])
	}
	// The same request presigned by the SDK.
	req, _ := http.NewRequest(http.MethodGet, "https://"+mskHost+"/?Action=kafka-cluster%3AConnect&X-Amz-Expires=900", nil)
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: awsKey, SecretAccessKey: awsSecret, SessionToken: awsToken},
		req, emptyHash, "kafka-cluster", "eu-west-1", at)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(signed)
	if want := u.Query().Get("X-Amz-Signature"); p["x-amz-signature"] != want || want == "" {
		t.Errorf("signature %q; the SDK's for the same request %q", p["x-amz-signature"], want)
	}
	if strings.Contains(string(first), awsSecret) {
		t.Error("the secret key is in the payload")
	}
}

// TestMSKOAuthToken: the OAUTHBEARER variant's token is the MSK library's: a
// presigned kafka-cluster:Connect URL of the region, with the user agent
// after the signature, base64url without padding.
func TestMSKOAuthToken(t *testing.T) {
	at := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	tok, err := mskToken(context.Background(), aws.Credentials{AccessKeyID: awsKey, SecretAccessKey: awsSecret, SessionToken: awsToken}, "eu-west-1", at)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(tok, "=+/") {
		t.Errorf("not base64url without padding: %s", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if u.Host != "kafka.eu-west-1.amazonaws.com" || q.Get("Action") != "kafka-cluster:Connect" || q.Get("X-Amz-Expires") != "900" ||
		q.Get("X-Amz-Credential") != awsKey+"/20261204/eu-west-1/kafka-cluster/aws4_request" || q.Get("X-Amz-Date") != "20261204T030000Z" ||
		q.Get("X-Amz-Security-Token") != awsToken || len(q.Get("X-Amz-Signature")) != 64 || !strings.HasPrefix(q.Get("User-Agent"), "txnscope/") {
		t.Errorf("token URL %s", raw)
	}
	if !strings.Contains(string(raw), "X-Amz-Signature=") || strings.Index(string(raw), "User-Agent=") < strings.Index(string(raw), "X-Amz-Signature=") {
		t.Errorf("the user agent is not after the signature: %s", raw)
	}
}

// TestMSKIAMFailures: no credentials, or a profile that is not there, is one
// line naming where credentials were looked for, never a key.
func TestMSKIAMFailures(t *testing.T) {
	awsEnv(t, "", "", "")
	m, err := awsMechanism(conn.AWSIAM{Origin: "sasl.jaas.config (line 4)"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, err = m.Authenticate(ctx, mskHost+":9098")
	if err == nil || !strings.Contains(err.Error(), "MSK IAM (sasl.jaas.config (line 4)): no usable AWS credentials from the environment (AWS_ACCESS_KEY_ID") ||
		strings.Contains(err.Error(), "\n") {
		t.Errorf("no credentials: %v", err)
	}
	awsEnv(t, awsKey, awsSecret, "")
	if _, err := awsMechanism(conn.AWSIAM{Profile: "nosuch", Origin: "sasl.jaas.config (line 4)"}); err == nil ||
		!strings.Contains(err.Error(), "nosuch") || strings.Contains(err.Error(), awsSecret) {
		t.Errorf("a missing profile: %v", err)
	}
}

// TestMSKCredsHint: why no credentials came, in one line naming what to do.
func TestMSKCredsHint(t *testing.T) {
	for _, c := range []struct {
		a    conn.AWSIAM
		err  string
		want string
	}{
		{conn.AWSIAM{}, "operation error STS: GetCallerIdentity, https response error StatusCode: 403, api error ExpiredToken: The security token included in the request is expired",
			"the AWS credentials have expired: refresh them (aws sso login, a new session token)"},
		{conn.AWSIAM{RoleARN: "arn:aws:iam::1:role/r"}, "operation error STS: AssumeRole, https response error StatusCode: 403, api error AccessDenied: not authorized",
			"assuming arn:aws:iam::1:role/r (awsRoleArn) failed: "},
		{conn.AWSIAM{Profile: "ops"}, "failed to refresh cached credentials, no EC2 IMDS role found",
			"no usable AWS credentials from the profile ops (awsProfileName) of ~/.aws/config and ~/.aws/credentials: "},
		{conn.AWSIAM{}, "failed to refresh cached credentials,\nno EC2 IMDS role found",
			"no usable AWS credentials from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), ~/.aws/credentials"},
	} {
		got := awsCredsHint(c.a, errString(c.err))
		if !strings.HasPrefix(got, c.want) || strings.Contains(got, "\n") {
			t.Errorf("%q:\n%s\nwant it to start %q, on one line", c.err, got, c.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
