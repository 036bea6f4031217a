package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// buildVersion is what the binary knows of its own build, from the Go toolchain's build
// information: the module and its version, the VCS revision, its time, and whether the work
// tree had changes not committed.
type buildVersion struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuildVersion reads the running binary's build information. A binary built without it
// (a test binary, or go build -buildvcs=false) says so rather than inventing a version.
func readBuildVersion() buildVersion {
	v := buildVersion{
		Module:   "steward",
		Version:  "unknown",
		Go:       runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Path != "" {
		v.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}

// String is the version as one line: the module, its version, the revision and its time.
func (v buildVersion) String() string {
	s := v.Module + " " + v.Version
	switch {
	case v.Revision != "":
		s += ", revision " + v.Revision
		if v.Time != "" {
			s += " (" + v.Time + ")"
		}
		if v.Modified {
			s += ", with changes not committed"
		}
	default:
		s += ", revision unknown (built without version control information)"
	}
	return s + ", " + v.Go + " " + v.Platform
}

// addVersionCommand adds `steward version` and `steward --version`.
func addVersionCommand(root *cobra.Command, g *globals) {
	v := readBuildVersion()
	root.Version = v.String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print steward's module version and VCS revision (from the build information)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return printOut(cmd.OutOrStdout(), g.jsonOut, v, func(w io.Writer) { fmt.Fprintln(w, v.String()) })
		},
	})
}
