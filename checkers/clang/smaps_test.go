package clang

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// smapsMapping is one mapping of /proc/PID/smaps: its name (the header line's last field, e.g.
// [stack]; empty for anonymous memory), its kB fields (Size, Private_Dirty, …) and its VmFlags.
type smapsMapping struct {
	name  string
	kB    map[string]float64
	flags []string
}

// smapsOf reads every mapping of pid from /proc/PID/smaps.
func smapsOf(t *testing.T, pid int) []smapsMapping {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var maps []smapsMapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
		case !strings.HasSuffix(fields[0], ":"): // a mapping's header line
			m := smapsMapping{kB: map[string]float64{}}
			if len(fields) >= 6 {
				m.name = fields[len(fields)-1]
			}
			maps = append(maps, m)
		case len(maps) == 0:
			t.Fatalf("smaps of %d: %q before any mapping", pid, sc.Text())
		case fields[0] == "VmFlags:":
			maps[len(maps)-1].flags = fields[1:]
		case len(fields) == 3 && fields[2] == "kB":
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				t.Fatalf("smaps of %d: %q: %v", pid, sc.Text(), err)
			}
			maps[len(maps)-1].kB[strings.TrimSuffix(fields[0], ":")] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return maps
}
