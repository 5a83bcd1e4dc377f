package kafkaadmin

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/twmb/franz-go/pkg/sasl"
	mskiam "github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/txnscope/txnscope/internal/buildinfo"
	"github.com/txnscope/txnscope/internal/conn"
)

// awsMechanism is Amazon MSK's IAM authentication: credentials from the AWS
// SDK's default chain (environment, shared config and credentials files and
// their profile, web identity for Kubernetes service accounts, ECS, the
// instance role), or a role assumed with them; refreshed by the SDK before
// they expire. AWS_MSK_IAM signs with franz-go's sasl/aws, the OAUTHBEARER
// variant presigns with the SDK's Signature V4 signer.
func awsMechanism(a conn.AWSIAM) (sasl.Mechanism, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts []func(*awsconfig.LoadOptions) error
	if a.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(a.Profile))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("MSK IAM (%s): the AWS configuration cannot be read: %s", a.Origin, oneLine(err))
	}
	creds := cfg.Credentials
	if a.RoleARN != "" {
		stsCfg := cfg.Copy()
		stsCfg.Region = a.STSRegion
		if stsCfg.Region == "" {
			stsCfg.Region = "us-east-1" // the library's default: the global STS endpoint
		}
		session := a.RoleSessionName
		if session == "" {
			session = "txnscope-" + fmt.Sprint(time.Now().Unix())
		}
		creds = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(stsCfg), a.RoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = session
		}))
	}
	if creds == nil {
		return nil, fmt.Errorf("MSK IAM (%s): no AWS credentials provider", a.Origin)
	}
	get := func(ctx context.Context) (aws.Credentials, error) {
		c, err := creds.Retrieve(ctx)
		if err != nil {
			return c, fmt.Errorf("MSK IAM (%s): %s", a.Origin, awsCredsHint(a, err))
		}
		return c, nil
	}
	if !a.OAuthBearer {
		return mskiam.ManagedStreamingIAM(func(ctx context.Context) (mskiam.Auth, error) {
			c, err := get(ctx)
			return mskiam.Auth{AccessKey: c.AccessKeyID, SecretKey: c.SecretAccessKey, SessionToken: c.SessionToken, UserAgent: userAgent()}, err
		}), nil
	}
	region := cfg.Region
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		if region == "" {
			return oauth.Auth{}, fmt.Errorf("MSK IAM (%s): no AWS region: set AWS_REGION or the profile's region", a.Origin)
		}
		c, err := get(ctx)
		if err != nil {
			return oauth.Auth{}, err
		}
		tok, err := mskToken(ctx, c, region, time.Now())
		return oauth.Auth{Token: tok}, err
	}), nil
}

func userAgent() string { return "txnscope/" + buildinfo.Read().Version }

// emptyHash is the SHA-256 of an empty payload, as Signature V4 presigns a GET.
var emptyHash = func() string { h := sha256.Sum256(nil); return hex.EncodeToString(h[:]) }()

// mskToken is the MSK library's OAUTHBEARER token: a GET of
// kafka-cluster:Connect at kafka.REGION.amazonaws.com, presigned for 15
// minutes, its user agent added after signing, base64url without padding.
func mskToken(ctx context.Context, c aws.Credentials, region string, now time.Time) (string, error) {
	u := url.URL{Scheme: "https", Host: "kafka." + region + ".amazonaws.com", Path: "/"}
	q := url.Values{"Action": {"kafka-cluster:Connect"}, "X-Amz-Expires": {"900"}}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	signed, _, err := v4.NewSigner().PresignHTTP(ctx, c, req, emptyHash, "kafka-cluster", region, now.UTC())
	if err != nil {
		return "", fmt.Errorf("presigning the MSK token: %w", err)
	}
	signed += "&User-Agent=" + url.QueryEscape(userAgent())
	return base64.RawURLEncoding.EncodeToString([]byte(signed)), nil
}

// awsCredsHint says, in one line, why no credentials came and where they
// are looked for.
func awsCredsHint(a conn.AWSIAM, err error) string {
	text := oneLine(err)
	where := "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), ~/.aws/credentials and ~/.aws/config, web identity (AWS_WEB_IDENTITY_TOKEN_FILE), the instance role"
	if a.Profile != "" {
		where = "the profile " + a.Profile + " (awsProfileName) of ~/.aws/config and ~/.aws/credentials"
	}
	switch {
	case strings.Contains(text, "ExpiredToken"), strings.Contains(text, "expired"):
		return "the AWS credentials have expired: refresh them (aws sso login, a new session token) (" + text + ")"
	case a.RoleARN != "" && strings.Contains(text, "AssumeRole"):
		return "assuming " + a.RoleARN + " (awsRoleArn) failed: " + text
	}
	return "no usable AWS credentials from " + where + ": " + text
}
