package testutil

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

// CheckSnapshotJSON fails t unless doc is valid against
// docs/snapshot.schema.json, the published schema of `snapshot -o json`
// (formats such as date-time asserted).
func CheckSnapshotJSON(t testing.TB, doc []byte) {
	t.Helper()
	if err := SnapshotSchemaErr(doc); err != nil {
		t.Fatal(err)
	}
}

// SnapshotSchemaErr is why doc does not match docs/snapshot.schema.json (nil
// when it does).
func SnapshotSchemaErr(doc []byte) error {
	schemaOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		schema, schemaErr = c.Compile(filepath.Join(filepath.Dir(file), "..", "..", "docs", "snapshot.schema.json"))
	})
	if schemaErr != nil {
		return fmt.Errorf("docs/snapshot.schema.json: %v", schemaErr)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := schema.Validate(inst); err != nil {
		return fmt.Errorf("the snapshot does not match docs/snapshot.schema.json: %v", err)
	}
	return nil
}
