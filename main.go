// Command steward is a terminal workbench for the people who supervise a fleet of autonomous
// LLM coding workers. See README.md.
package main

import (
	"os"

	"steward/cli"
	"steward/leases"
)

func main() {
	// Every DB write of this program goes through leases: its readers may map a WAL
	// index read-only and never write a read mark.
	leases.OnlyOwnWriters()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
