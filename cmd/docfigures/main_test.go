package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The project's own figures: each was made by its registered command at a commit since which
// nothing it measures changed. This is the check CI runs (make test runs go test ./...).
func TestTheDocsFiguresHaveNotDrifted(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("the figures are checked against git history: %v", err)
	}
	figs, err := loadRegistry(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) == 0 {
		t.Fatal("no figures registered")
	}
	for _, p := range Check(root, figs) {
		t.Error(p)
	}
}

// run runs a command in dir and fails the test when it fails.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// Check catches every kind of drift, and update writes what the command prints at HEAD.
func TestCheckCatchesDriftAndUpdateFixesIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "init", "-q")
	write("code/speed.txt", "42\n")
	write("doc.md", "# Doc\n\n<!-- figure speed: `cat code/speed.txt` at 0000000 -->\nold\n<!-- end figure speed -->\n\nmore\n")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-qm", "one")
	figs := []Figure{{Name: "speed", File: "doc.md", Command: "cat code/speed.txt", Measures: []string{"code"}, Shape: `^\d+\n$`}}

	problems := Check(dir, figs)
	if len(problems) != 2 || !strings.Contains(strings.Join(problems, "\n"), "not in this repository's history") ||
		!strings.Contains(strings.Join(problems, "\n"), "shape") {
		t.Fatalf("an unknown commit and a wrong shape: %q", problems)
	}
	if err := Update(dir, figs, nil); err != nil {
		t.Fatal(err)
	}
	doc, _ := os.ReadFile(filepath.Join(dir, "doc.md"))
	if !strings.Contains(string(doc), "\n42\n<!-- end figure speed -->\n\nmore\n") {
		t.Fatalf("update wrote %q", doc)
	}
	run(t, dir, "git", "commit", "-qam", "figures")
	if problems := Check(dir, figs); len(problems) != 0 {
		t.Fatalf("fresh figure: %q", problems)
	}

	// A change to what it measures makes it stale; a change elsewhere does not.
	write("other.txt", "x\n")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-qm", "unrelated")
	if problems := Check(dir, figs); len(problems) != 0 {
		t.Fatalf("after an unrelated change: %q", problems)
	}
	write("code/speed.txt", "43\n")
	if err := Update(dir, figs, nil); err == nil || !strings.Contains(err.Error(), "uncommitted") {
		t.Fatalf("update on uncommitted measured code: %v", err)
	}
	run(t, dir, "git", "commit", "-qam", "faster")
	if problems := Check(dir, figs); len(problems) != 1 || !strings.Contains(problems[0], "code/speed.txt changed") {
		t.Fatalf("stale figure: %q", problems)
	}

	// The registry's command is the doc's.
	figs[0].Command = "cat code/speed.txt | head -1"
	if problems := Check(dir, figs); !strings.Contains(strings.Join(problems, "\n"), "says command") {
		t.Fatalf("changed command: %q", problems)
	}
	// A figure whose block was removed is missing.
	write("doc.md", "# Doc\n")
	if problems := Check(dir, figs); len(problems) != 1 || !strings.Contains(problems[0], "no figure block") {
		t.Fatalf("removed block: %q", problems)
	}
}

// A figure block in the documentation that the registry does not name, or whose marker cannot
// be read, is drift too: nothing would ever check it.
func TestCheckCatchesUnregisteredAndUnreadableFigures(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	doc := "# Doc\n\n<!-- figure speed: `echo 1` at 0000000 -->\n1\n<!-- end figure speed -->\n"
	if err := os.WriteFile(filepath.Join(dir, "docs", "a.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("<!-- figure Speed at HEAD -->\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	problems := strings.Join(Check(dir, nil), "\n")
	if !strings.Contains(problems, "docs/a.md: figure speed is not registered") ||
		!strings.Contains(problems, "README.md: a figure marker that cannot be read") {
		t.Fatalf("unregistered and unreadable figures: %q", problems)
	}
}

// update NAME runs NAME's command only, wherever NAME stands in the registry (it once ran every
// figure after NAME too), and an unknown name is an error.
func TestUpdateRunsOnlyTheNamedFigures(t *testing.T) {
	dir := t.TempDir()
	run(t, dir, "git", "init", "-q")
	doc := "<!-- figure one: `echo 1` at 0000000 -->\nold\n<!-- end figure one -->\n" +
		"<!-- figure two: `echo 2` at 0000000 -->\nold\n<!-- end figure two -->\n"
	if err := os.WriteFile(filepath.Join(dir, "doc.md"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-qm", "one")
	figs := []Figure{
		{Name: "one", File: "doc.md", Command: "echo 1", Measures: []string{"code"}, Shape: `^\d\n$`},
		{Name: "two", File: "doc.md", Command: "echo 2", Measures: []string{"code"}, Shape: `^\d\n$`},
	}
	if err := Update(dir, figs, []string{"one"}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "doc.md"))
	if !strings.Contains(string(got), "-->\n1\n<!-- end figure one -->") || !strings.Contains(string(got), "-->\nold\n<!-- end figure two -->") {
		t.Fatalf("update one wrote:\n%s", got)
	}
	if err := Update(dir, figs, []string{"three"}); err == nil || !strings.Contains(err.Error(), "no figure named three") {
		t.Fatalf("update of an unknown figure: %v", err)
	}
}
