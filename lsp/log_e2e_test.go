package lsp_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The server's log lines reach the client as window/logMessage at their own level (VS Code's
// languageclient labels every stderr line [error]); stderr keeps only what cannot go there.
func TestLogGoesToTheClientAtItsLevel(t *testing.T) {
	c := startServer(t, clientOptions{})
	uri := "file://" + filepath.Join(t.TempDir(), "a.cpp")
	// Opening a document with a preamble checkpoints it (the warm start), which logs a line.
	c.open(uri, "cpp", "#include <vector>\nint f() {\n")
	waitLog(t, c, "checkpointed", time.Minute)
	for _, line := range strings.Split(c.stderr.String(), "\n") {
		if strings.Contains(line, "checkpointed") && !strings.HasPrefix(line, "[logMessage 3] warm start: ") {
			t.Errorf("the warm start's line came as %q, want window/logMessage of type Info (3)", line)
		}
	}
	if code := c.shutdown(); code != 0 {
		t.Errorf("exit status %d", code)
	}
}
