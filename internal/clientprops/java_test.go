package clientprops

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The Java client is the reference for sasl.jaas.config: a password txnscope
// reads differently from the same file is a login that fails with no clue why.
// testdata/jaas-java.txt holds what Kafka 4.4's JaasContext made of each case
// below; TestJAASReadAsJava needs no Java, TestJAASMatchesJavaLive asks Java
// itself (with scripts/kafka-up's jars) about these and random texts:
//
//	source /tmp/txnscope-kafka/env && go test -run TestJAASMatchesJavaLive ./internal/clientprops/ -update-jaas

var updateJAAS = flag.Bool("update-jaas", false, "rewrite testdata/jaas-java.txt from the Java client's answers")

const jaasCorpusFile = "testdata/jaas-java.txt"

const plainReq = `org.apache.kafka.common.security.plain.PlainLoginModule required`

// jaasCases are sasl.jaas.config values ("jaas") and whole properties files
// ("props", read by java.util.Properties first).
func jaasCases() [][2]string {
	var cs [][2]string
	add := func(mode, text string) { cs = append(cs, [2]string{mode, text}) }
	for _, pw := range []string{
		`a\"b`, `a\'b`, `a\\b`, `a\nb`, `a\tb`, `a\rb`, `a\bb`, `a\fb`, `a\vb`, `a\ab`, `a\0b`, `a\12b`, `a\123b`,
		`a\377b`, `a\400b`, `a\xb`, `a\9b`, `a/b`, `a//b`, `a/*b*/c`, `a;b`, `a=b`, `a b`, "a\u00e9b", `a\u0041b`,
		`a\`, `a\"`, "a\x00b", "a\u0085b", "a\U0001F600b", "plain",
	} {
		add("jaas", plainReq+` username="u" password="`+pw+`";`)
		add("jaas", plainReq+` username='u' password='`+pw+`';`)
	}
	for _, tail := range []string{
		`username=u password=p1-_$.x;`, `username=u password=123;`, `username=u password=12ab;`, `username=u password=-5;`,
		`username=u password=-x;`, `username=u password=.5;`, `username="u" password="p" // comment`,
		`/* c */ username="u" password="p";`, `username="u" password="abc;`, "username=\"u\"\npassword=\"p\";",
		"username=\"u\" password=\"p\nq\";", "username=\"u\" password=\"p\n;", `username="u" password="p";  `,
		`username="u" password="p"`, `username="u" password=p;x`, `username = "u" password = "p" ;`,
		`username="u" password=a.b/c;`, `username="u" password=a#b;`, `username="u" password=a@b;`, `username="u" password=é;`,
		`username="" password="p";`, `"username"="u" password="p";`, `username="u" password="p"; ` + plainReq + ` username="v";`,
		`username="u" password="a"b";`, `username="u" password="p" 5="x";`, `username="u" password;`, `username="u" password=;`,
		"username=\"u\"\x00password=\"p\";", "username=\"u\"\u0085password=\"p\";", "username=\"u\" p\u00e4ss=\"x\" password=\"p\";",
	} {
		add("jaas", plainReq+" "+tail)
	}
	for _, whole := range []string{
		``, `   `, `;`, `PlainLoginModule;`, `PlainLoginModule required;`, `PlainLoginModule REQUIRED username="u";`,
		`PlainLoginModule maybe username="u";`, `"org.x.PlainLoginModule" required username="u" password="p";`,
		`PlainLoginModule "required" password="p";`, `123 required;`, `/* only a comment */`,
	} {
		add("jaas", whole)
	}
	// The properties layer first: \" there is a quote to Java's Properties,
	// so `password="a\"b"` in a file ends the quoted value at the a.
	for _, line := range []string{
		`sasl.jaas.config=` + plainReq + ` username="u" password="a\"b";`,
		`sasl.jaas.config=` + plainReq + ` username="u" password="a\\"b";`,
		`sasl.jaas.config=` + plainReq + ` username="u" password="a\\\"b";`,
		`sasl.jaas.config=` + plainReq + ` username="u" password="a\\\\b";`,
		`sasl.jaas.config=` + plainReq + ` username="u" password="a\u00e9\t";`,
		"sasl.jaas.config=" + plainReq + " \\\n    username=\"u\" \\\n    password=\"p\";",
		"sasl.jaas.config=" + plainReq + " username=\"u\" password=\"p\\\nq\";",
	} {
		add("props", line+"\n")
	}
	return cs
}

// goReading is txnscope's answer in JaasCheck.java's format.
func goReading(mode, text string) string {
	value := text
	if mode == "props" {
		entries, err := Parse(text)
		if err != nil {
			return "err " + err.Error()
		}
		value = ""
		for _, e := range entries {
			if e.Key == "sasl.jaas.config" {
				value = e.Value
			}
		}
	}
	j, err := parseJAAS(value)
	if err != nil {
		return "err " + err.Error()
	}
	b64 := func(k string) string {
		v, ok := j.options[k]
		if !ok {
			return "-"
		}
		return base64.StdEncoding.EncodeToString([]byte(v))
	}
	return "ok " + base64.StdEncoding.EncodeToString([]byte(j.module)) + " " + b64("username") + " " + b64("password")
}

// same compares two readings: both refusals (their words differ), or the
// same module, username and password.
func same(goAns, javaAns string) bool {
	if strings.HasPrefix(goAns, "err") && strings.HasPrefix(javaAns, "err") {
		return true
	}
	return goAns == javaAns
}

func TestJAASReadAsJava(t *testing.T) {
	data, err := os.ReadFile(jaasCorpusFile)
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[[2]string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("%s: bad line %q", jaasCorpusFile, line)
		}
		text, err := strconv.Unquote(f[1])
		if err != nil {
			t.Fatalf("%s: %q: %v", jaasCorpusFile, f[1], err)
		}
		recorded[[2]string{f[0], text}] = f[2]
	}
	for _, c := range jaasCases() {
		java, ok := recorded[c]
		if !ok {
			t.Errorf("%s %q: no answer of Java's recorded: run with -update-jaas (see the top of java_test.go)", c[0], c[1])
			continue
		}
		if got := goReading(c[0], c[1]); !same(got, java) {
			t.Errorf("%s %q:\n   txnscope %s\n   Java     %s", c[0], c[1], got, java)
		}
	}
}

// TestJAASMatchesJavaLive asks Kafka's own JaasContext about the cases and
// about random texts built from the pieces that tokenizers get wrong.
func TestJAASMatchesJavaLive(t *testing.T) {
	libs := strings.TrimSpace(os.Getenv("TXNSCOPE_KAFKA_LIBS"))
	if libs == "" {
		msg := "TXNSCOPE_KAFKA_LIBS is not set: run scripts/kafka-up (it fetches Kafka's jars) and source its env"
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and " + msg)
		}
		t.Skip(msg)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TXNSCOPE_JAAS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("random texts from TXNSCOPE_JAAS_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))

	cases := jaasCases()
	fixed := len(cases)
	for range 3000 {
		cases = append(cases, [2]string{"jaas", randomJAAS(rng)})
	}
	answers := askJava(t, libs, cases)
	accepted := 0
	for i, c := range cases {
		if strings.HasPrefix(answers[i], "ok") {
			accepted++
		}
		if got := goReading(c[0], c[1]); !same(got, answers[i]) {
			t.Errorf("%s %q:\n   txnscope %s\n   Java     %s", c[0], c[1], got, answers[i])
		}
	}
	t.Logf("%d texts, %d of them accepted by Java", len(cases), accepted)
	if *updateJAAS {
		var b bytes.Buffer
		b.WriteString("# What Kafka's JaasContext (Java) made of java_test.go's cases: mode, the text (Go-quoted), its answer.\n")
		b.WriteString("# Regenerate: see the top of java_test.go.\n")
		for i, c := range cases[:fixed] {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", c[0], strconv.Quote(c[1]), answers[i])
		}
		if err := os.WriteFile(jaasCorpusFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func askJava(t *testing.T, libs string, cases [][2]string) []string {
	t.Helper()
	classes := t.TempDir()
	jars, err := filepath.Glob(filepath.Join(libs, "*.jar"))
	if err != nil || len(jars) == 0 {
		t.Fatalf("no jars in %s", libs)
	}
	cp := strings.Join(jars, string(os.PathListSeparator))
	if out, err := exec.Command("javac", "-d", classes, "-cp", cp, "testdata/JaasCheck.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	var in bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&in, "%s %s\n", c[0], base64.StdEncoding.EncodeToString([]byte(c[1])))
	}
	cmd := exec.Command("java", "-cp", cp+string(os.PathListSeparator)+classes, "JaasCheck")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, stderr.Bytes())
	}
	var answers []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		answers = append(answers, sc.Text())
	}
	if len(answers) != len(cases) {
		t.Fatalf("java answered %d of %d texts:\n%s", len(answers), len(cases), stderr.Bytes())
	}
	return answers
}

// randomJAAS strings together the pieces of a login module entry, with now
// and then a piece that tokenizers disagree on.
func randomJAAS(rng *rand.Rand) string {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	odd := func() string {
		return pick(`\`, `\\`, `\"`, `\'`, `\0`, `\7`, `\18`, `\377`, `\400`, `\b`, `\v`, `\a`, `\q`, `"`, `'`, "\n", "\r",
			"\t", "\x00", "\x7f", "\u0085", "\u00a0", "\u00ff", "\u0100", "日", "\U0001F600", "/", "//", "/*", "*/", "-",
			".", "5", "-5", "1.2.3", "$", "_", "#", "=", ";", " ", "é")
	}
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			if rng.IntN(4) == 0 {
				b.WriteString(odd())
			} else {
				b.WriteString(pick("a", "Z", "pw", "x9", "user", "p-q", "a_b", "s$t", "v.w"))
			}
		}
		return b.String()
	}
	value := func() string {
		switch rng.IntN(3) {
		case 0:
			return `"` + word() + `"`
		case 1:
			return `'` + word() + `'`
		}
		return word()
	}
	var b strings.Builder
	b.WriteString(pick(plainReq, "org.apache.kafka.common.security.scram.ScramLoginModule "+pick("required", "optional", "REQUIRED"), `"m" required`, "m"))
	for range rng.IntN(4) {
		b.WriteString(pick(" ", "  ", "\n", " /* c */ ", "\t"))
		b.WriteString(pick("username", "password", "k", word()))
		b.WriteString(pick("=", " = ", "=", "=", ""))
		b.WriteString(value())
	}
	b.WriteString(pick(";", ";", ";", " ;", "", "; ", ";//x", "; m required;"))
	if rng.IntN(8) == 0 { // and a mutation anywhere between two characters
		s := b.String()
		i := rng.IntN(len(s) + 1)
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++ // inside a character it would make bytes that are not UTF-8, which Java and Go decode apart
		}
		return s[:i] + odd() + s[i:]
	}
	return b.String()
}
