package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A --flink URL whose password keeps it from parsing is refused without
// the password anywhere in what is printed, saying how to write it.
func TestFlinkPasswordNotEchoed(t *testing.T) {
	for _, u := range []string{"http://jmadmin:pa/s#s3cret@jm:8081", "http://jmadmin:p%zzs3cret@jm:8081", "http://jmadmin:p s3cret@jm:8081", "http://jmadmin:8081/s3cret@jm"} {
		t.Run(u, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := Run(context.Background(), []string{"resolve", "--job", "x", "--flink", u}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
			first, _, _ := strings.Cut(errb.String(), "\n")
			if code != exitUsage || !strings.HasPrefix(first, `txnscope: --flink "http://***@jm`) || !strings.Contains(first, "must be percent-encoded") {
				t.Errorf("exit %d, %q: want a usage error saying a password's characters must be percent-encoded", code, first)
			}
			if strings.Contains(out.String()+errb.String(), "s3cret") || strings.Contains(out.String()+errb.String(), "jmadmin") {
				t.Errorf("the user info is printed: %q", first)
			}
		})
	}
}
