// Command routerlab simulates a fleet of vLLM workers behind a KV-aware router, replays
// Mooncake traces through it, and tunes the router — in a terminal explorer or headless.
package main

import (
	"os"

	"github.com/routerlab/routerlab/cli"
)

func main() {
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
