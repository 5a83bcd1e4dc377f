package clientprops

import (
	"errors"
	"strings"
)

// jaas is the one login module of a client's sasl.jaas.config, e.g.
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";
type jaas struct {
	module  string
	options map[string]string
}

// The login modules txnscope understands, by their class names.
const (
	plainModule  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	oauthModule  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	kerberosHint = "Krb5LoginModule"
)

// parseJAAS reads Kafka's JAAS syntax: a module class, a control flag, then
// key=value options (values quoted with " or ', or bare words) and a ';'.
// Its errors never quote the text: it holds the password.
func parseJAAS(s string) (jaas, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return jaas{}, err
	}
	if len(toks) == 0 {
		return jaas{}, errors.New("it is empty")
	}
	if toks[0].quoted || toks[0].text == "=" || toks[0].text == ";" {
		return jaas{}, errors.New("it does not start with a login module class name")
	}
	j := jaas{module: toks[0].text, options: map[string]string{}}
	if len(toks) < 2 {
		return jaas{}, errors.New("the login module has no control flag (required)")
	}
	switch strings.ToLower(toks[1].text) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return jaas{}, errors.New("the login module's control flag is not required, requisite, sufficient or optional")
	}
	i := 2
	for i < len(toks) && !(toks[i].text == ";" && !toks[i].quoted) {
		if i+2 >= len(toks) || toks[i].quoted || toks[i+1].text != "=" || toks[i+1].quoted {
			return jaas{}, errors.New(`its options are not all key="value"`)
		}
		if v := toks[i+2]; v.text == ";" && !v.quoted {
			return jaas{}, errors.New(`an option has no value`)
		}
		j.options[toks[i].text] = toks[i+2].text
		i += 3
	}
	if i >= len(toks) {
		return jaas{}, errors.New("it does not end with ';'")
	}
	if i+1 < len(toks) {
		return jaas{}, errors.New("it holds more than one login module; a client needs exactly one")
	}
	return j, nil
}

type jaasToken struct {
	text   string
	quoted bool
}

// jaasTokens splits like Java's StreamTokenizer as Kafka's JaasConfig sets
// it up: words, quoted strings with backslash escapes, and '=' and ';'.
func jaasTokens(s string) ([]jaasToken, error) {
	var out []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '=' || c == ';':
			out = append(out, jaasToken{text: string(c)})
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			closed := false
			for j < len(s) {
				d := s[j]
				if d == c {
					closed = true
					j++
					break
				}
				if d == '\\' && j+1 < len(s) {
					j++
					switch s[j] {
					case 'n':
						b.WriteByte('\n')
					case 't':
						b.WriteByte('\t')
					case 'r':
						b.WriteByte('\r')
					default:
						b.WriteByte(s[j])
					}
					j++
					continue
				}
				b.WriteByte(d)
				j++
			}
			if !closed {
				return nil, errors.New("a quoted value is not closed")
			}
			out = append(out, jaasToken{text: b.String(), quoted: true})
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r\f=;\"'", rune(s[j])) {
				j++
			}
			out = append(out, jaasToken{text: s[i:j]})
			i = j
		}
	}
	return out, nil
}
