// Command steward is a terminal workbench for the people who supervise a fleet of autonomous
// LLM coding workers. See README.md.
package main

import (
	"os"

	"steward/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
