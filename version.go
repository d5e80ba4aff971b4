package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionInfo describes the build.
type versionInfo struct {
	version string // module version, "dev" for a local build
	commit  string // VCS revision, "unknown" when not stamped
	goVer   string
}

// readVersion reads the version from the binary's build information.
func readVersion() versionInfo {
	v := versionInfo{version: "dev", commit: "unknown", goVer: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.version = info.Main.Version
	}
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.commit != "unknown" {
		v.commit += "-dirty"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "complybox %s\ncommit: %s\ngo: %s\n", v.version, v.commit, strings.TrimSpace(v.goVer))
			return err
		},
	}
}
