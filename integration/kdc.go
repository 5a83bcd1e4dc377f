package integration

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Realm is the Kerberos realm of the tests' KDC.
const Realm = "TXNSCOPE.TEST"

// KDC is a real MIT Kerberos KDC (Debian's krb5-kdc) on 127.0.0.1 with a realm of its own, its
// database and configuration in the test's temporary directory.
type KDC struct {
	// Krb5Conf is the clients' krb5.conf (KRB5_CONFIG, java.security.krb5.conf).
	Krb5Conf string
	dir      string
	env      []string
}

// StartKDC creates the realm with tickets that live at most life and starts its KDC; it is
// stopped when the test ends. Without MIT's KDC the test is skipped, or fails under CI=true.
func StartKDC(t *testing.T, life time.Duration) *KDC {
	t.Helper()
	for _, tool := range []string{"krb5kdc", "kdb5_util", "kadmin.local", "kinit"} {
		if _, err := lookTool(tool); err != nil {
			missing(t, "no MIT Kerberos ("+tool+"): apt-get install krb5-kdc krb5-admin-server krb5-user")
		}
	}
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	k := &KDC{dir: t.TempDir()}
	k.Krb5Conf = filepath.Join(k.dir, "krb5.conf")
	kdcConf := filepath.Join(k.dir, "kdc.conf")
	lifeText := fmt.Sprintf("%ds", int(life.Seconds()))
	write(t, k.Krb5Conf, fmt.Sprintf(`[libdefaults]
	default_realm = %[1]s
	dns_lookup_kdc = false
	dns_lookup_realm = false
	udp_preference_limit = 1
	ticket_lifetime = %[3]s
	forwardable = false
	rdns = false
	default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
	permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
	%[1]s = {
		kdc = 127.0.0.1:%[2]s
	}
[domain_realm]
	localhost = %[1]s
`, Realm, port, lifeText))
	write(t, kdcConf, fmt.Sprintf(`[kdcdefaults]
	kdc_ports = %[2]s
	kdc_tcp_ports = %[2]s
[realms]
	%[1]s = {
		database_name = %[3]s/principal
		key_stash_file = %[3]s/stash
		acl_file = %[3]s/kadm5.acl
		max_life = %[4]s
		max_renewable_life = 0
		supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
	}
[logging]
	kdc = FILE:%[3]s/kdc.log
`, Realm, port, k.dir, lifeText))
	write(t, filepath.Join(k.dir, "kadm5.acl"), "")
	k.env = append(os.Environ(), "KRB5_CONFIG="+k.Krb5Conf, "KRB5_KDC_PROFILE="+kdcConf)
	k.run(t, "kdb5_util", "create", "-s", "-r", Realm, "-P", randomHex(t, 12))
	kdcPath, _ := lookTool("krb5kdc")
	cmd := exec.Command(kdcPath, "-n", "-r", Realm)
	cmd.Env = k.env
	logf, err := os.Create(filepath.Join(k.dir, "krb5kdc.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting krb5kdc: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			data, _ := os.ReadFile(filepath.Join(k.dir, "kdc.log"))
			t.Logf("the KDC's log:\n%s", tail(string(data), 30))
		}
	})
	if err := waitTCP("127.0.0.1:"+port, 10*time.Second); err != nil {
		t.Fatalf("krb5kdc not listening: %v", err)
	}
	return k
}

// Principal creates name@Realm with a random key and exports it to a keytab of its own.
func (k *KDC) Principal(t *testing.T, name string) (keytab string) {
	t.Helper()
	keytab = filepath.Join(k.dir, strings.ReplaceAll(name, "/", "_")+".keytab")
	k.run(t, "kadmin.local", "-r", Realm, "-q", "addprinc -randkey "+name+"@"+Realm)
	k.run(t, "kadmin.local", "-r", Realm, "-q", "ktadd -norandkey -k "+keytab+" "+name+"@"+Realm)
	if err := os.Chmod(keytab, 0o600); err != nil {
		t.Fatal(err)
	}
	return keytab
}

// Kinit fills a file ticket cache for name from its keytab, as an operator's kinit does, with a
// ticket that lives life (0: the realm's longest).
func (k *KDC) Kinit(t *testing.T, name, keytab string, life time.Duration) (cache string) {
	t.Helper()
	cache = filepath.Join(t.TempDir(), "krb5cc_"+strings.ReplaceAll(name, "/", "_"))
	args := []string{"-k", "-t", keytab, "-c", "FILE:" + cache}
	if life > 0 {
		args = append(args, "-l", fmt.Sprintf("%ds", int(life.Seconds())))
	}
	k.run(t, "kinit", append(args, name+"@"+Realm)...)
	return cache
}

// Logins counts the tickets the KDC has issued to name@Realm by a login (AS_REQ) so far.
func (k *KDC) Logins(t *testing.T, name string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k.dir, "kdc.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, "AS_REQ") && strings.Contains(l, "ISSUE") && strings.Contains(l, " "+name+"@"+Realm+" for krbtgt/") {
			n++
		}
	}
	return n
}

func (k *KDC) run(t *testing.T, tool string, args ...string) {
	t.Helper()
	path, err := lookTool(tool)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = k.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
}

// lookTool finds an MIT tool on PATH or in /usr/sbin, where Debian puts the KDC's.
func lookTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s: not on PATH nor in /usr/sbin", name)
	}
	return p, nil
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitTCP waits until addr accepts connections.
func waitTCP(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
