// Command routerlab simulates a fleet of vLLM workers behind a KV-aware router, replays
// Mooncake traces through it, and tunes the router — in a terminal explorer or headless.
package main

// The generated blocks (command outputs) of README.md and docs/*.md are re-run and compared by
// TestREADME, and docs/experiment-file.md's key reference by TestExperimentFileReference;
// this rewrites them after a change that moves a figure.
//go:generate go test . -run TestREADME|TestExperimentFileReference -update

import (
	"os"

	"github.com/routerlab/routerlab/cli"
	"github.com/routerlab/routerlab/internal/hugeheap"
)

func main() {
	hugeheap.Reserve() // a fresh process's heap in 2 MB pages: a quarter of a replay's CPU on a VM
	os.Exit(cli.Execute(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
