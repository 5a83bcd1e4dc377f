// Command txnscope is a terminal UI that shows every transaction of a Kafka
// cluster live and aborts stuck ones safely. See README.md; the command line
// lives in internal/cli.
package main

import "github.com/txnscope/txnscope/internal/cli"

func main() { cli.Main() }
