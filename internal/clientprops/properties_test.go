package clientprops

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []Entry
	}{
		{"empty", "", nil},
		{"separators", "a=1\nb:2\nc 3\nd\t4\ne = 5\nf : 6\ng   =   7\n", []Entry{
			{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}, {"d", "4", 4}, {"e", "5", 5}, {"f", "6", 6}, {"g", "7", 7}}},
		{"comments and blank lines", "# a comment\n! another\n   # indented comment\n\n   \nk=v\n", []Entry{{"k", "v", 6}}},
		{"leading whitespace", "   \t key = value", []Entry{{"key", "value", 1}}},
		{"trailing whitespace kept in value", "k=v  ", []Entry{{"k", "v  ", 1}}},
		{"key only", "flag\nempty=\n", []Entry{{"flag", "", 1}, {"empty", "", 2}}},
		{"second separator belongs to the value", "k==v\nk2=:v\nk3 = = v", []Entry{{"k", "=v", 1}, {"k2", ":v", 2}, {"k3", "= v", 3}}},
		{"continuation", "k=one \\\n    two \\\n\tthree\nnext=1", []Entry{{"k", "one two three", 1}, {"next", "1", 4}}},
		{"even backslashes do not continue", "k=a\\\\\nl=b", []Entry{{"k", `a\`, 1}, {"l", "b", 2}}},
		{"comment line does not continue", "# c \\\nk=v", []Entry{{"k", "v", 2}}},
		{"continued line starting with # is no comment", "k=a\\\n#b", []Entry{{"k", "a#b", 1}}},
		{"continuation at end of file", "k=a\\", []Entry{{"k", "a", 1}}},
		{"escapes", `k=\t\n\r\f\\\=\:\#\!\ x\q`, []Entry{{"k", "\t\n\r\f\\=:#! xq", 1}}},
		{"unicode escapes", `k=caf\u00e9 \u0041\u00DF`, []Entry{{"k", "café Aß", 1}}},
		{"escaped separators in key", `my\=key\:x\ y=v`, []Entry{{"my=key:x y", "v", 1}}},
		{"CRLF and CR line ends", "a=1\r\nb=2\rc=3", []Entry{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"continuation over CRLF", "a=1\\\r\n  2\r\nb=3", []Entry{{"a", "12", 1}, {"b", "3", 3}}},
		{"UTF-8 kept", "k=ünïcödé", []Entry{{"k", "ünïcödé", 1}}},
		{"Latin-1 bytes read as Java does", "k=caf\xe9", []Entry{{"k", "café", 1}}},
		{"duplicate keys all listed", "k=1\nk=2", []Entry{{"k", "1", 1}, {"k", "2", 2}}},
		{"jaas value", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username="alice" \
    password="a-secret";`, []Entry{{"sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a-secret";`, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse(c.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a=1\nk=\\u12", `line 2: in the value of k: malformed \uXXXX escape`},
		{"a=1\n\nk=x\\uZZZZy", `line 3: in the value of k: malformed \uXXXX escape`},
		{`bad\u00zzkey=1`, `line 1: in the key: malformed \uXXXX escape`},
		{"sasl.jaas.config=x password=\"hunter2\\u00\"", `line 1: in the value of sasl.jaas.config: malformed \uXXXX escape`},
	} {
		_, err := Parse(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("Parse(%q) = %v, want %s", c.text, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error shows the value: %v", err)
		}
	}
}

func TestParseJAAS(t *testing.T) {
	for _, c := range []struct {
		text string
		want jaas
		err  string
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="p";`,
			jaas{plainModule, map[string]string{"username": "alice", "password": "p"}}, ""},
		{`  org.apache.kafka.common.security.scram.ScramLoginModule   REQUIRED
		  username = 'bob'  password = "with \"quotes\" and \\ and ; and = inside" ;  `,
			jaas{scramModule, map[string]string{"username": "bob", "password": `with "quotes" and \ and ; and = inside`}}, ""},
		{`org.apache.kafka.common.security.plain.PlainLoginModule optional username=bare password=word;`,
			jaas{plainModule, map[string]string{"username": "bare", "password": "word"}}, ""},
		{`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;`,
			jaas{oauthModule, map[string]string{}}, ""},
		{``, jaas{}, "it is empty"},
		{`PlainLoginModule username="a" password="b";`, jaas{}, "control flag"},
		{`PlainLoginModule required username="a" password="b"`, jaas{}, "does not end with ';'"},
		{`PlainLoginModule required username="a" password="b;`, jaas{}, "not closed"},
		{`PlainLoginModule required username="a" password;`, jaas{}, `key="value"`},
		{`PlainLoginModule required username="a" password=;`, jaas{}, "no value"},
		{`PlainLoginModule required username="a"; Other required;`, jaas{}, "more than one"},
		{`"PlainLoginModule" required;`, jaas{"PlainLoginModule", map[string]string{}}, ""}, // as Java reads it
		{`= required;`, jaas{}, "login module class name"},
		{`PlainLoginModule required password=12;`, jaas{}, "no value"},
		{`PlainLoginModule required password="\141\b\v";`, jaas{"PlainLoginModule", map[string]string{"password": "a\b\v"}}, ""},
	} {
		got, err := parseJAAS(c.text)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("parseJAAS(%q) error = %v, want %q", c.text, err, c.err)
			}
		case err != nil:
			t.Errorf("parseJAAS(%q): %v", c.text, err)
		case !reflect.DeepEqual(got, c.want):
			t.Errorf("parseJAAS(%q) = %+v, want %+v", c.text, got, c.want)
		}
	}
}
