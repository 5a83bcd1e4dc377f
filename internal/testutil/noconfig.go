package testutil

import (
	"os"
	"path/filepath"
)

// NoConfigFile keeps the tests of a package that runs txnscope from reading
// the developer's own config file (~/.config/txnscope/config.yaml): its
// current context would change what every command does. Call it from an
// init of the package's tests; a test that wants a file names it itself.
func NoConfigFile() {
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(os.TempDir(), "txnscope-tests-have-no-config"))
	os.Unsetenv("TXNSCOPE_CONFIG")
	os.Unsetenv("TXNSCOPE_CONTEXT")
}
