package clang

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hydra-lsp/hydra/checkers"
)

// attackerEnv makes the test binary act as another process of the same user that tries to take
// over the checkers' checkpoints (TestCheckpointsArePrivate); its value lists the shim pids.
const attackerEnv = "HYDRA_CLANG_ATTACKER"

func init() {
	if v := os.Getenv(attackerEnv); v != "" {
		attacker(v)
		os.Exit(0)
	}
}

// attacker does what a local process can do to reach a checkpoint: find the UNIX sockets the
// shim processes hold (their /proc/PID/fd links, matched in /proc/net/unix) and connect to every
// one of them that has a name (abstract or a path), sending free and resume. It touches no
// socket of any other process (other checkers may run on the machine). It prints what it found
// and reached.
func attacker(pidList string) {
	inodes := map[string]bool{}
	for _, p := range strings.Split(pidList, ",") {
		dir := "/proc/" + p + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			fmt.Println("ERROR", err)
			continue
		}
		for _, e := range ents {
			link, err := os.Readlink(dir + "/" + e.Name())
			if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				inodes[strings.TrimSuffix(ino, "]")] = true
			}
		}
	}
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		fmt.Println("ERROR", err)
		return
	}
	defer f.Close()
	var targets []string
	held, listening := 0, 0
	sc := bufio.NewScanner(f)
	sc.Scan() // header: Num RefCount Protocol Flags Type St Inode Path
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 7 {
			continue
		}
		name := ""
		if len(fs) > 7 {
			name = fs[7]
		}
		mine := inodes[fs[6]]
		if mine {
			held++
			if fs[3] == "00010000" { // __SO_ACCEPTCON: a listening socket
				listening++
			}
		}
		if name != "" && mine {
			targets = append(targets, name)
		}
	}
	fmt.Println("HELD", held, "LISTENING", listening)
	for _, name := range targets {
		fmt.Println("NAMED", name)
		for _, msg := range []string{`{"op":"free"}`, `{"op":"resume","id":1}`} {
			conn, err := net.DialTimeout("unix", name, time.Second)
			if err != nil {
				continue
			}
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			_, werr := conn.Write([]byte(msg + "\n"))
			reply := make([]byte, 256)
			n, _ := conn.Read(reply)
			conn.Close()
			if werr == nil {
				fmt.Printf("REACHED %s %s -> %q\n", name, msg, reply[:n])
			}
		}
	}
}

// Another process of the same user can neither resume nor free a checkpoint: no shim process
// holds a socket with a name (nothing to connect to, nothing listening), the attack leaves the
// checkpoint alive, and the owner still resumes it.
func TestCheckpointsArePrivate(t *testing.T) {
	dir := t.TempDir()
	c := newChecker(t, Options{})
	opts := checkers.SessionOptions{Filename: dir + "/private.cpp"}
	cp := takeCheckpoint(t, c, opts, "int base = 41;\n")
	// A live session (mid-input) and a session resumed from the checkpoint, too.
	live, err := c.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := live.Submit("int other = 1;\n", checkers.SubmitOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, live, checkers.KindProgress)
	resumed, err := c.Resume(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Close()
	rInit := waitFor(t, resumed, checkers.KindInit)
	pids := []string{strconv.Itoa(cp.PID()), strconv.Itoa(live.(*Session).PID()), strconv.Itoa(rInit.PID)}

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), attackerEnv+"="+strings.Join(pids, ","))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("attacker: %v\n%s", err, out)
	}
	report := string(out)
	t.Logf("attacker on shim processes %v:\n%s", pids, report)
	var held, listening int
	if _, err := fmt.Sscanf(report[strings.Index(report, "HELD"):], "HELD %d LISTENING %d", &held, &listening); err != nil {
		t.Fatalf("attacker report: %v", err)
	}
	if held < 3 {
		t.Fatalf("the attacker saw %d sockets of the shim processes, want at least their 3 channels: the probe is blind", held)
	}
	if listening > 0 || strings.Contains(report, "NAMED") || strings.Contains(report, "REACHED") || strings.Contains(report, "ERROR") {
		t.Fatalf("a checkpoint or session is reachable by another process:\n%s", report)
	}
	if !procAlive(cp.PID()) {
		t.Fatal("the checkpoint died during the attack")
	}
	s, err := c.Resume(context.Background(), cp)
	if err != nil {
		t.Fatal(err)
	}
	submitAll(t, s, []string{"int main() { return base + 1; }\n"})
	if v, _ := sessionVerdict(t, collect(t, s)); !v.OK {
		t.Fatalf("resume after the attack: %v", v)
	}
}
