package testutil

import (
	"strings"
	"testing"
)

// The schema is not a formality: it refuses what the documentation rules
// out.
func TestSnapshotSchemaRefusesWhatTheDocsRuleOut(t *testing.T) {
	const ok = `{"schema":2,"taken_at":"2026-03-01T12:00:00Z","bootstrap":"x:1","broker_max_timeout_ms":null,` +
		`"history":{"source":"polls","why":"","log_since":null,"window_since":null},"jobs":[],"pinned_partitions":[],"stuck_groups":[],"hanging":[],"transactions":[` +
		`{"transactional_id":"a-0-1","state":"Ongoing","producer_id":1,"producer_epoch":0,"coordinator":1,"timeout_ms":60000,` +
		`"start_time":"2026-03-01T11:59:00Z","age_ms":60000,"timeout_ratio":1,"partitions":[{"topic":"t","partition":0}],` +
		`"commits_seen":0,"aborts_seen":0,"commits_5m":0,"aborts_5m":0,"commits_60m":0,"aborts_60m":0,"recent_transactions":[],"problems":[]}` +
		`],"partitions":[]}`
	if err := SnapshotSchemaErr([]byte(ok)); err != nil {
		t.Fatalf("a valid document: %v", err)
	}
	notUTF8 := strings.Replace(ok, `"a-0-1",`, `"a-\ufffd-0-1","transactional_id_base64":"YS3/LTAtMQ==",`, 1)
	if err := SnapshotSchemaErr([]byte(notUTF8)); err != nil {
		t.Fatalf("an id that is not UTF-8, with its bytes: %v", err)
	}
	for name, bad := range map[string]string{
		"no jobs":          strings.Replace(ok, `"jobs":[],`, ``, 1),
		"schema 1":         strings.Replace(ok, `"schema":2`, `"schema":1`, 1),
		"an unknown state": strings.Replace(ok, `"Ongoing"`, `"Running"`, 1),
		"a bad time":       strings.Replace(ok, `"2026-03-01T11:59:00Z"`, `"yesterday"`, 1),
		"an extra field":   strings.Replace(ok, `"problems":[]}`, `"problems":[],"x":1}`, 1),
		"a negative age":   strings.Replace(ok, `"age_ms":60000`, `"age_ms":-1`, 1),
		"bytes not base64": strings.Replace(notUTF8, `"YS3/LTAtMQ=="`, `"a-\ufffd-0-1"`, 1),
		"empty bytes":      strings.Replace(notUTF8, `"YS3/LTAtMQ=="`, `""`, 1),
	} {
		if SnapshotSchemaErr([]byte(bad)) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
