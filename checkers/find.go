package checkers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Program says where a checker looks for the program it runs (the Clang shim, TypeScript's
// compiler), in order: the explicit path a caller or setting gives, then the environment
// variable Env, then beside the running executable (BesideExe), then under the Go module that
// holds the working directory (InModule: a developer's checkout). Each of BesideExe and
// InModule is a path pattern (filepath.Glob's) relative to that directory.
type Program struct {
	Checker   string // "clang checker": how errors begin
	What      string // "hydra-clang-shim": what errors call it
	Env       string
	BesideExe string
	InModule  string
	Fix       string // what to do when it is missing: "run `make build`"
}

// Find resolves the program: explicit when it is set, else the first executable file that the
// places in Program's order give. The error names every path tried.
func (p Program) Find(explicit string) (string, error) {
	isExe := func(path string) bool {
		st, err := os.Stat(path)
		return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
	}
	if explicit != "" {
		if isExe(explicit) {
			return explicit, nil
		}
		return "", fmt.Errorf("%s: %s %s: not an executable file", p.Checker, p.What, explicit)
	}
	if v := os.Getenv(p.Env); v != "" {
		if isExe(v) {
			return v, nil
		}
		return "", fmt.Errorf("%s: $%s=%s: not an executable file", p.Checker, p.Env, v)
	}
	var patterns []string
	if exe, err := os.Executable(); err == nil {
		patterns = append(patterns, filepath.Join(filepath.Dir(exe), p.BesideExe))
	}
	if root := moduleRoot(); root != "" {
		patterns = append(patterns, filepath.Join(root, p.InModule))
	}
	for _, pat := range patterns {
		matches, _ := filepath.Glob(pat)
		for _, m := range matches {
			if isExe(m) {
				return m, nil
			}
		}
	}
	return "", fmt.Errorf("%s: %s not found (tried %s); %s or set $%s",
		p.Checker, p.What, strings.Join(patterns, ", "), p.Fix, p.Env)
}

// moduleRoot returns the directory of the go.mod above the working directory, or "".
func moduleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
