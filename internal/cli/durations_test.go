package cli

import (
	"strings"
	"testing"
	"time"
)

// Every duration the command line turns into time is bounded, and the
// message names the flag: 153722867280913 minutes used to overflow into a
// 4 s threshold, and --refresh 1ns polled the cluster flat out.
func TestParseDurationBounds(t *testing.T) {
	for _, tt := range []struct {
		args []string
		msg  string // "" accepted
	}{
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "153722867280913"},
			"--max-transaction-timeout 153722867280913 is too large: at most 153722867 minutes"},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "9223372036854775807"}, "--max-transaction-timeout 9223372036854775807 is too large"},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "153722868"}, "--max-transaction-timeout 153722868 is too large"},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "153722867"}, ""},
		{[]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "99999999999999999999"}, `invalid argument "99999999999999999999" for "--max-transaction-timeout" flag`},
		{[]string{"list", "--duration-filter", "9223372036855"}, "--duration-filter 9223372036855 is too large: at most 9223372036854 ms"},
		{[]string{"list", "--duration-filter", "9223372036854"}, ""},
		{[]string{"list", "--duration-filter", "-2"}, "--duration-filter must be -1 (all) or at least 0, got -2"},
		{[]string{"--refresh", "1ns"}, "--refresh 1ns is shorter than the least allowed, 500ms: every refresh scans the whole cluster"},
		{[]string{"--refresh", "499ms"}, "--refresh 499ms is shorter than the least allowed, 500ms"},
		{[]string{"demo", "--refresh", "100ms"}, "--refresh 100ms is shorter than the least allowed, 500ms"},
		{[]string{"--refresh", "500ms"}, ""},
		{[]string{"--refresh", "1h"}, ""},
		{[]string{"--refresh", "1h0m1s"}, "--refresh 1h0m1s is longer than the most allowed, 1h0m0s"},
		{[]string{"--refresh", "2562047h"}, "--refresh 2562047h0m0s is longer than the most allowed"},
		{[]string{"--refresh", "2562048h"}, `invalid argument "2562048h" for "--refresh" flag`},
		{[]string{"--timeout", "3h"}, "--timeout 3h0m0s is longer than the most allowed, 10m0s"},
		{[]string{"list", "--timeout", "500us"}, "--timeout 500µs is shorter than the least allowed, 1ms"},
		{[]string{"snapshot", "--timeout", "10m"}, ""},
		{[]string{"--checkpoint-interval", "2562047h"}, "--checkpoint-interval 2562047h0m0s is longer than the most allowed, 24h0m0s"},
		{[]string{"snapshot", "--checkpoint-interval", "24h"}, ""},
		{[]string{"--checkpoint-interval", "-1s"}, "--checkpoint-interval must be positive, got -1s"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parse(tt.args)
			switch {
			case tt.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.msg == "":
			case err == nil:
				t.Fatalf("accepted; want %q", tt.msg)
			case !strings.HasPrefix(err.Error(), tt.msg) || strings.Contains(err.Error(), "\n"):
				t.Errorf("error %q, want one line starting %q", err, tt.msg)
			}
		})
	}
}

// The bound makes the minutes-to-time conversion find-hanging does safe.
func TestMaxTransactionTimeoutConverts(t *testing.T) {
	c, err := parse([]string{"find-hanging", "--topic", "t", "--max-transaction-timeout", "153722867"})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Duration(c.one.maxTxnTimeoutMin) * time.Minute; d < 290*365*24*time.Hour {
		t.Errorf("153722867 minutes became %s", d)
	}
}

// A value pasted by mistake is clipped in the message, which stays one short line.
func TestLongValuesClipped(t *testing.T) {
	long := strings.Repeat("x", 20000)
	for _, args := range [][]string{{long}, {"snapshot", long}, {"-b", "a b" + long}, {"snapshot", "-o", long}, {"--sasl-mechanism", long}} {
		_, err := parse(args)
		if err == nil || len(err.Error()) > 240 || !strings.Contains(err.Error(), "…") {
			t.Errorf("%.20q...: error of %d bytes", args, len(fmtErr(err)))
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
