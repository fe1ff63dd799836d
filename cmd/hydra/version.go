package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
)

// version is the release's version, set at link time by `make dist`
// (-ldflags "-X main.version=…"); a plain `go build` leaves it empty and buildVersion falls back
// to the commit Go recorded in the binary.
var version string

func init() {
	commands["version"] = command{
		summary: "print Hydra's version (also: hydra --version)",
		run: func(args []string) int {
			printVersion(os.Stdout)
			return 0
		},
	}
}

// buildVersion is the version this binary reports (hydra --version, the LSP's serverInfo, hydra
// doctor): the link-time version, else the main module's version Go recorded (a pseudo-version
// naming the commit), else "dev-" and the commit of Go's VCS stamp ("+dirty" when the work tree
// had changes), else "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "dev-" + rev
	if dirty {
		v += "+dirty"
	}
	return v
}

// printVersion writes what `hydra --version` prints.
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "hydra %s\n", strings.TrimSpace(buildVersion()))
}
