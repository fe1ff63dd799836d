package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The editor clients carry the release in the file VERSION (scripts/version.sh stamps it into
// hydra): each compares the server's version with its own and warns when they differ, so a
// client whose version drifted from VERSION would warn against its own release's server.
func TestClientVersionsMatchVERSION(t *testing.T) {
	read := func(rel string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("..", "..", rel))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	release := strings.TrimSpace(read("VERSION"))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(release) {
		t.Fatalf("VERSION holds %q, not a release such as 0.1.0", release)
	}
	for _, c := range []struct{ file, pattern string }{
		{"vscode-extension/package.json", `(?m)^  "version": "([^"]*)"`},
		{"editors/emacs/hydra.el", `(?m)^;; Version: (\S+)$`},
		{"editors/emacs/hydra.el", `(?m)^\(defconst hydra-version "([^"]*)"`},
		{"editors/nvim/lua/hydra/version.lua", `(?m)^M\.version = "([^"]*)"`},
	} {
		m := regexp.MustCompile(c.pattern).FindStringSubmatch(read(c.file))
		if m == nil {
			t.Errorf("%s: no version matching %s", c.file, c.pattern)
		} else if m[1] != release {
			t.Errorf("%s says version %s, VERSION says %s", c.file, m[1], release)
		}
	}
}
