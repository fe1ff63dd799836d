// Command docfigures writes the measured figures of the project's documentation and checks that
// none has drifted from the code it measures.
//
// A figure is a block of a Markdown file between two markers:
//
//	<!-- figure NAME: `COMMAND` at COMMIT -->
//	…what COMMAND printed…
//	<!-- end figure NAME -->
//
// docs/figures.json registers each figure: its file, its command (run by bash at the repository
// root after `make build`), the paths whose code it measures and the shape its output must have
// (a regular expression). Usage:
//
//	go run ./cmd/docfigures update [NAME…]   run the commands at HEAD and write their figures
//	go run ./cmd/docfigures check            fail when a figure drifted (what CI runs, in go test)
//
// A figure has drifted when its block is missing, its command differs from the registry's,
// its commit is unknown, a file it measures changed since that commit, or its text no longer
// has the registered shape. A figure block in README.md or docs/*.md that the registry does not
// name, or whose opening marker cannot be read, is a problem too: a figure nobody registered is
// one nobody checks. A measured path may be a git pathspec, e.g. ":(glob,exclude)**/*_test.go"
// to leave tests out of what a figure measures. update refuses to run when a measured path has uncommitted changes,
// so that the commit a figure states is the code that made it.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Figure is one registered figure.
type Figure struct {
	Name     string   `json:"name"`
	File     string   `json:"file"`     // the Markdown file holding it, from the repository root
	Command  string   `json:"command"`  // run by bash at the repository root
	Measures []string `json:"measures"` // paths whose changes make the figure stale
	Shape    string   `json:"shape"`    // a regular expression the figure's text must match
	Fence    string   `json:"fence"`    // when set, the output is put in a ``` block of this language
}

// registryPath is where the figures are registered.
const registryPath = "docs/figures.json"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: docfigures update [NAME…] | check")
		os.Exit(2)
	}
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintf(os.Stderr, "docfigures: %v\n", err)
		os.Exit(2)
	}
	figs, err := loadRegistry(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "docfigures: %v\n", err)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "check":
		problems := Check(root, figs)
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "docfigures: %s\n", p)
		}
		if len(problems) > 0 {
			fmt.Fprintln(os.Stderr, "docfigures: run `make build && go run ./cmd/docfigures update NAME` on committed code, then commit the docs")
			os.Exit(1)
		}
	case "update":
		if err := Update(root, figs, os.Args[2:]); err != nil {
			fmt.Fprintf(os.Stderr, "docfigures: %v\n", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "docfigures: unknown mode %q (update, check)\n", os.Args[1])
		os.Exit(2)
	}
}

// repoRoot is the git work tree the working directory is in.
func repoRoot() (string, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return "", fmt.Errorf("not in a git work tree: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// loadRegistry reads docs/figures.json under root.
func loadRegistry(root string) ([]Figure, error) {
	data, err := os.ReadFile(filepath.Join(root, registryPath))
	if err != nil {
		return nil, err
	}
	var figs []Figure
	if err := json.Unmarshal(data, &figs); err != nil {
		return nil, fmt.Errorf("%s: %w", registryPath, err)
	}
	for _, f := range figs {
		if f.Name == "" || f.File == "" || f.Command == "" || len(f.Measures) == 0 {
			return nil, fmt.Errorf("%s: figure %q needs a name, a file, a command and what it measures", registryPath, f.Name)
		}
		if _, err := regexp.Compile(f.Shape); err != nil {
			return nil, fmt.Errorf("%s: figure %s: shape: %w", registryPath, f.Name, err)
		}
	}
	return figs, nil
}

// block is a figure as found in its file.
type block struct {
	command, commit string
	body            string // between the markers, without them
	start, end      int    // byte range of the whole block, markers included
}

// markerRe matches a figure's opening marker.
var markerRe = regexp.MustCompile("<!-- figure ([a-z0-9-]+): `([^`]*)` at ([0-9a-f]{7,40}) -->\n")

// findBlock finds figure name in text.
func findBlock(text, name string) (block, bool) {
	for _, m := range markerRe.FindAllStringSubmatchIndex(text, -1) {
		if text[m[2]:m[3]] != name {
			continue
		}
		endMarker := "<!-- end figure " + name + " -->"
		k := strings.Index(text[m[1]:], endMarker)
		if k < 0 {
			return block{}, false
		}
		return block{command: text[m[4]:m[5]], commit: text[m[6]:m[7]], body: text[m[1] : m[1]+k],
			start: m[0], end: m[1] + k + len(endMarker)}, true
	}
	return block{}, false
}

// docGlobs are the documentation files whose figure blocks must all be registered.
var docGlobs = []string{"README.md", "docs/*.md"}

// openingRe matches the start of anything meant as a figure's opening marker.
var openingRe = regexp.MustCompile("<!-- figure [^\n]*")

// Unregistered returns the figure blocks of the documentation under root that the registry does
// not name, and the opening markers that markerRe cannot read.
func Unregistered(root string, figs []Figure) []string {
	known := map[string]bool{}
	for _, f := range figs {
		known[f.Name] = true
	}
	var problems []string
	for _, g := range docGlobs {
		files, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", g, err))
			continue
		}
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", path, err))
				continue
			}
			rel, _ := filepath.Rel(root, path)
			for _, m := range openingRe.FindAllString(string(data), -1) {
				sub := markerRe.FindStringSubmatch(m + "\n")
				switch {
				case sub == nil:
					problems = append(problems, fmt.Sprintf("%s: a figure marker that cannot be read (want <!-- figure NAME: `COMMAND` at COMMIT -->): %s", rel, m))
				case !known[sub[1]]:
					problems = append(problems, fmt.Sprintf("%s: figure %s is not registered in %s", rel, sub[1], registryPath))
				}
			}
		}
	}
	return problems
}

// Check returns every way the registered figures drifted from the code they measure, and the
// figure blocks of the documentation that are not registered.
func Check(root string, figs []Figure) []string {
	problems := Unregistered(root, figs)
	for _, f := range figs {
		data, err := os.ReadFile(filepath.Join(root, f.File))
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", f.Name, err))
			continue
		}
		b, ok := findBlock(string(data), f.Name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no figure block in %s", f.Name, f.File))
			continue
		}
		if b.command != f.Command {
			problems = append(problems, fmt.Sprintf("%s: %s says command `%s`, the registry `%s`", f.Name, f.File, b.command, f.Command))
		}
		if !regexp.MustCompile(f.Shape).MatchString(b.body) {
			problems = append(problems, fmt.Sprintf("%s: the figure in %s no longer has its shape /%s/", f.Name, f.File, f.Shape))
		}
		if err := git(root, "cat-file", "-e", b.commit+"^{commit}"); err != nil {
			problems = append(problems, fmt.Sprintf("%s: commit %s is not in this repository's history", f.Name, b.commit))
			continue
		}
		args := append([]string{"diff", "--name-only", b.commit, "HEAD", "--"}, f.Measures...)
		out, err := gitOut(root, args...)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: git diff: %v", f.Name, err))
			continue
		}
		if changed := strings.Fields(out); len(changed) > 0 {
			problems = append(problems, fmt.Sprintf("%s: measured at %s, and since then %s changed", f.Name, b.commit, strings.Join(changed, ", ")))
		}
	}
	return problems
}

// Update runs the commands of the named figures (all when names is empty) and writes their
// output into their blocks, stamped with HEAD's commit.
func Update(root string, figs []Figure, names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	head, err := gitOut(root, "rev-parse", "--short=12", "HEAD")
	if err != nil {
		return err
	}
	head = strings.TrimSpace(head)
	for _, f := range figs {
		if len(names) > 0 && !want[f.Name] {
			continue
		}
		delete(want, f.Name) // what is left at the end names no figure
		dirty, err := gitOut(root, append([]string{"status", "--porcelain", "--"}, f.Measures...)...)
		if err != nil {
			return err
		}
		if strings.TrimSpace(dirty) != "" {
			return fmt.Errorf("%s: uncommitted changes in what it measures:\n%s", f.Name, dirty)
		}
		fmt.Fprintf(os.Stderr, "docfigures: %s: %s\n", f.Name, f.Command)
		cmd := exec.Command("bash", "-c", "set -o pipefail; "+f.Command)
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %s: %w", f.Name, f.Command, err)
		}
		body := out.String()
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		if f.Fence != "" {
			body = "```" + f.Fence + "\n" + body + "```\n"
		}
		if !regexp.MustCompile(f.Shape).MatchString(body) {
			return fmt.Errorf("%s: the output does not have its shape /%s/:\n%s", f.Name, f.Shape, body)
		}
		path := filepath.Join(root, f.File)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		b, ok := findBlock(string(data), f.Name)
		if !ok {
			return fmt.Errorf("%s: no figure block in %s to write (add its two markers)", f.Name, f.File)
		}
		text := string(data)
		block := "<!-- figure " + f.Name + ": `" + f.Command + "` at " + head + " -->\n" + body + "<!-- end figure " + f.Name + " -->"
		if err := os.WriteFile(path, []byte(text[:b.start]+block+text[b.end:]), 0o644); err != nil {
			return err
		}
	}
	for n := range want {
		return fmt.Errorf("no figure named %s in %s", n, registryPath)
	}
	return nil
}

func git(root string, args ...string) error {
	_, err := gitOut(root, args...)
	return err
}

func gitOut(root string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", errors.Join(err, errors.New(strings.TrimSpace(errb.String())))
	}
	return out.String(), nil
}
