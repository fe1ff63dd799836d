package clang

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PrivateKB returns the private memory (Private_Clean + Private_Dirty of
// /proc/PID/smaps_rollup) of a process in kB: for a dormant checkpoint, what it costs beyond
// the pages it still shares with the process it was forked from.
func PrivateKB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, fmt.Errorf("private memory of %d: %w", pid, err)
	}
	defer f.Close()
	var kb float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && (fields[0] == "Private_Clean:" || fields[0] == "Private_Dirty:") {
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return 0, fmt.Errorf("private memory of %d: %q: %w", pid, sc.Text(), err)
			}
			kb += v
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("private memory of %d: %w", pid, err)
	}
	return kb, nil
}
