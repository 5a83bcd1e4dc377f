package cli

import "github.com/txnscope/txnscope/internal/buildinfo"

// version is --version's line (buildinfo.Info.String).
func version() string { return buildinfo.Read().String() }
