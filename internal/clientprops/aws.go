package clientprops

import (
	"fmt"
	"strings"

	"github.com/txnscope/txnscope/internal/conn"
)

// The aws-msk-iam-auth library's classes, as a Java client names them.
const (
	mskModule        = "software.amazon.msk.auth.iam.IAMLoginModule"
	mskClientHandler = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
	mskOAuthHandler  = "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"
)

const clientHandlerKey = "sasl.client.callback.handler.class"

// awsFrom reads Amazon MSK's IAM login as the library reads it: the
// AWS_MSK_IAM mechanism with IAMLoginModule and IAMClientCallbackHandler, or
// OAUTHBEARER with IAMOAuthBearerLoginCallbackHandler as both handlers; the
// module's options awsProfileName, awsRoleArn, awsRoleSessionName and
// awsStsRegion.
func awsFrom(m map[string]Entry, mech string, line int) (*conn.AWSIAM, error) {
	je, ok := m["sasl.jaas.config"]
	wantModule, wantHandler := mskModule, mskClientHandler
	if mech == conn.OAuthBearer {
		wantModule, wantHandler = oauthModule, mskOAuthHandler
	}
	if !ok {
		return nil, fmt.Errorf("line %d: Amazon MSK IAM needs sasl.jaas.config=%s required;", line, wantModule)
	}
	j, err := parseJAAS(je.Value)
	if err != nil {
		return nil, fmt.Errorf("line %d: sasl.jaas.config cannot be read: %v", je.Line, err)
	}
	if j.module != wantModule {
		return nil, fmt.Errorf("line %d: sasl.jaas.config uses %s; with sasl.mechanism=%s Amazon MSK IAM needs %s", je.Line,
			short(j.module[strings.LastIndex(j.module, ".")+1:]), mech, wantModule)
	}
	h, ok := m[clientHandlerKey]
	if !ok {
		return nil, fmt.Errorf("line %d: Amazon MSK IAM needs %s=%s (the Java client fails without it)", line, clientHandlerKey, wantHandler)
	}
	if strings.TrimSpace(h.Value) != wantHandler {
		return nil, fmt.Errorf("line %d: %s=%s does not go with sasl.mechanism=%s: use %s", h.Line, clientHandlerKey, short(h.Value), mech, wantHandler)
	}
	a := &conn.AWSIAM{
		Profile:         strings.TrimSpace(j.options["awsProfileName"]),
		RoleARN:         strings.TrimSpace(j.options["awsRoleArn"]),
		RoleSessionName: strings.TrimSpace(j.options["awsRoleSessionName"]),
		STSRegion:       strings.TrimSpace(j.options["awsStsRegion"]),
		OAuthBearer:     mech == conn.OAuthBearer,
		Origin:          fmt.Sprintf("sasl.jaas.config (line %d)", je.Line),
	}
	if a.RoleARN != "" && !strings.HasPrefix(a.RoleARN, "arn:") {
		return nil, fmt.Errorf("line %d: sasl.jaas.config's awsRoleArn=%s is not an ARN (arn:aws:iam::ACCOUNT:role/NAME)", je.Line, short(a.RoleARN))
	}
	if a.RoleARN == "" && (a.RoleSessionName != "" || a.STSRegion != "") {
		return nil, fmt.Errorf("line %d: sasl.jaas.config's awsRoleSessionName and awsStsRegion go with awsRoleArn, which is not given", je.Line)
	}
	return a, nil
}
