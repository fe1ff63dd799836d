package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// readRegularFile reads the whole of path, which must be a regular file (or a link to one).
// A device (/dev/zero would be read until memory runs out), a FIFO or socket (which may never
// end, or block the open), a directory and anything else is refused with an error that says
// what path is, before a byte is read.
func readRegularFile(path string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO with no writer must not block before it can be refused.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s); give a file's path", path, fileKind(st.Mode()))
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b, nil
}

// fileKind names a file mode's type for readRegularFile's error.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "not a plain file: " + m.Type().String()
}
