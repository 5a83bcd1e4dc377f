package integration

import "github.com/txnscope/txnscope/internal/testutil"

func init() { testutil.NoConfigFile() }
