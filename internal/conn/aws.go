package conn

// AWSIAM is Amazon MSK's IAM authentication, as the aws-msk-iam-auth
// library's IAMLoginModule reads its options: credentials from the AWS SDK's
// default chain (or a named profile), optionally a role assumed first.
type AWSIAM struct {
	// Profile is awsProfileName: a profile of ~/.aws/config and credentials.
	Profile string
	// RoleARN is awsRoleArn: a role assumed with those credentials;
	// RoleSessionName (awsRoleSessionName) and STSRegion (awsStsRegion) go
	// with it.
	RoleARN, RoleSessionName, STSRegion string
	// OAuthBearer is the library's OAUTHBEARER variant
	// (IAMOAuthBearerLoginCallbackHandler): a presigned token, not the
	// AWS_MSK_IAM mechanism.
	OAuthBearer bool
	// Origin names the setting in messages: "sasl.jaas.config (line 4)".
	Origin string
}
