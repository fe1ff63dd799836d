package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The programs below are what generated code could do; each is compiled here (trusted test code)
// and run in the sandbox, where it must fail to do harm. They print what they managed to do.

// escape tries to read files outside its tmp, to write to the system and to open sockets; it
// exits 0 only when every attempt fails and writing its own /tmp works.
const escape = `#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>
#include <stdlib.h>

static int bad = 0;

static void try_read(const char *path) {
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		char buf[64] = {0};
		ssize_t n = read(fd, buf, sizeof buf - 1);
		printf("READ %s (%zd bytes): %s\n", path, n, buf);
		bad = 1;
		close(fd);
	} else {
		printf("cannot read %s: %s\n", path, strerror(errno));
	}
}

static void try_write(const char *path) {
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		printf("WROTE %s\n", path);
		bad = 1;
		close(fd);
	} else {
		printf("cannot write %s: %s\n", path, strerror(errno));
	}
}

int main(int argc, char **argv) {
	// argv: secret file, TCP port on 127.0.0.1, abstract UNIX socket name
	try_read(argv[1]);
	try_read("/etc/shadow");
	try_read("/etc/passwd");
	try_read("/root/.bashrc");
	try_write("/usr/hydra-sandbox-probe");
	try_write("/etc/hydra-sandbox-probe");
	int fd = open("/tmp/own", O_WRONLY | O_CREAT, 0600);
	if (fd < 0 || write(fd, "ok", 2) != 2) {
		printf("cannot write its own /tmp: %s\n", strerror(errno));
		bad = 1;
	}

	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {0};
	a.sin_family = AF_INET;
	a.sin_port = htons(atoi(argv[2]));
	inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
	if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
		printf("CONNECTED to 127.0.0.1:%s\n", argv[2]);
		bad = 1;
	} else {
		printf("cannot connect to 127.0.0.1:%s: %s\n", argv[2], strerror(errno));
	}

	int u = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un ua = {0};
	ua.sun_family = AF_UNIX;
	size_t n = strlen(argv[3]);
	memcpy(ua.sun_path + 1, argv[3], n); // abstract: sun_path[0] == 0
	if (u >= 0 && connect(u, (struct sockaddr *)&ua, sizeof(sa_family_t) + 1 + n) == 0) {
		printf("CONNECTED to @%s\n", argv[3]);
		bad = 1;
	} else {
		printf("cannot connect to @%s: %s\n", argv[3], strerror(errno));
	}
	return bad;
}
`

// leaver forks a sleeper that detaches itself (new session, SIGHUP ignored) and exits; with a
// second argument it then waits forever itself (to be killed at the wall-clock limit).
const leaver = `#include <signal.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
	pid_t p = fork();
	if (p == 0) {
		setsid();
		signal(SIGHUP, SIG_IGN);
		execl("/usr/bin/sleep", "sleep", argv[1], (char *)0);
		return 1;
	}
	printf("forked %d\n", (int)p);
	fflush(stdout);
	if (argc > 2)
		for (;;) pause();
	return 0;
}
`

// spinner burns CPU forever.
const spinner = `int main(void) { for (volatile unsigned long i = 0;; i++) ; }`

// forker forks as many children as it can (each waits) and prints how many it made.
const forker = `#include <stdio.h>
#include <unistd.h>
int main(void) {
	int n = 0;
	for (; n < 200; n++) {
		pid_t p = fork();
		if (p < 0) break;
		if (p == 0) { pause(); return 0; }
	}
	printf("forked %d\n", n);
	return 0;
}
`

// hog allocates and touches 2 GiB.
const hog = `#include <stdio.h>
#include <stdlib.h>
int main(void) {
	size_t n = (size_t)2 << 30;
	volatile char *p = malloc(n);
	if (!p) { printf("malloc failed\n"); return 3; }
	for (size_t i = 0; i < n; i += 4096) p[i] = 1;
	printf("allocated\n");
	return 0;
}
`

// build compiles src into dir/name with clang-19.
func build(t *testing.T, dir, name, src string) {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("clang-19", "-O1", "-w", "-o", filepath.Join(dir, name), c).CombinedOutput(); err != nil {
		t.Fatalf("compile %s: %v\n%s", name, err, out)
	}
}

// progDir is a directory of test programs the sandbox's user (nobody, under root) can reach:
// t.TempDir and its parent are private to the test's user.
func progDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func unique() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sandboxes are the ways the tests run the sandbox: as the current user and, when that is root,
// also from an unprivileged user (nobody, through setpriv), as a developer's machine runs it.
func sandboxes(t *testing.T) map[string]*Sandbox {
	t.Helper()
	out := map[string]*Sandbox{"as " + currentUser(): {}}
	if os.Geteuid() == 0 {
		sp, err := exec.LookPath("setpriv")
		if err != nil {
			t.Fatalf("setpriv (util-linux) is needed to test the sandbox as a normal user: %v", err)
		}
		out["as nobody"] = &Sandbox{wrap: []string{sp, "--reuid=65534", "--regid=65534", "--clear-groups"}}
	}
	return out
}

func currentUser() string {
	if os.Geteuid() == 0 {
		return "root"
	}
	return "uid " + strconv.Itoa(os.Geteuid())
}

func TestSandboxKeepsGeneratedCodeIn(t *testing.T) {
	for name, sb := range sandboxes(t) {
		t.Run(name, func(t *testing.T) {
			if err := sb.Available(context.Background()); err != nil {
				// No skip, not even in a chroot (InChroot), where bubblewrap cannot make a
				// sandbox: a CI machine without one must fail here, not pass untested.
				t.Fatal(err)
			}
			dir := progDir(t)
			build(t, dir, "escape", escape)
			build(t, dir, "leaver", leaver)
			build(t, dir, "spinner", spinner)
			build(t, dir, "forker", forker)
			build(t, dir, "hog", hog)

			t.Run("reads only its own tmp, no sockets", func(t *testing.T) {
				// Readable by anyone on the host: only the sandbox stops the program.
				secret := filepath.Join(progDir(t), "secret.txt")
				if err := os.WriteFile(secret, []byte("hydra-secret"), 0o644); err != nil {
					t.Fatal(err)
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				var accepted atomic.Int32
				go countAccepts(ln, &accepted)
				abstract := "hydra-sandbox-test-" + unique()
				uln, err := net.Listen("unix", "@"+abstract)
				if err != nil {
					t.Fatal(err)
				}
				defer uln.Close()
				go countAccepts(uln, &accepted)
				port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
				// The control: outside the sandbox the same program reads the secret and connects.
				out, _ := exec.Command(filepath.Join(dir, "escape"), secret, port, abstract).CombinedOutput()
				if !strings.Contains(string(out), "hydra-secret") || strings.Count(string(out), "CONNECTED") != 2 {
					t.Fatalf("the escape program does not work outside the sandbox either:\n%s", out)
				}
				for accepted.Load() < 2 {
					time.Sleep(10 * time.Millisecond)
				}
				accepted.Store(0)
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: []string{"/box/escape", secret, port, abstract}})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s:\n%s", res, res.Output)
				if !res.OK() || strings.Contains(res.Output, "hydra-secret") {
					t.Errorf("the sandboxed program got out (%s):\n%s", res, res.Output)
				}
				if !strings.Contains(res.Output, "cannot connect to 127.0.0.1") {
					t.Errorf("the program did not report its connection attempt:\n%s", res.Output)
				}
				if n := accepted.Load(); n != 0 {
					t.Errorf("the listeners accepted %d connections from the sandbox", n)
				}
			})

			t.Run("leaves no process behind", func(t *testing.T) {
				// The control: outside the sandbox the sleeper outlives the program.
				mark := "4343." + strconv.Itoa(int(time.Now().UnixNano()%1e6))
				if err := exec.Command(filepath.Join(dir, "leaver"), mark).Run(); err != nil { // no pipes for the sleeper to hold
					t.Fatalf("leaver: %v", err)
				}
				var left []int
				for end := time.Now().Add(5 * time.Second); len(left) == 0 && time.Now().Before(end); {
					time.Sleep(20 * time.Millisecond)
					left = waitGone(mark, 0)
				}
				if len(left) == 0 {
					t.Fatal("outside the sandbox the sleeper did not outlive the program: the check below proves nothing")
				}
				for _, pid := range left {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				for _, wait := range []bool{false, true} {
					mark := "4242." + strconv.Itoa(int(time.Now().UnixNano()%1e6))
					argv := []string{"/box/leaver", mark}
					lim := Limits{Wall: 30 * time.Second}
					if wait {
						argv = append(argv, "wait")
						lim.Wall = 2 * time.Second
					}
					res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: argv, Limits: lim})
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(res.Output, "forked") || res.TimedOut != wait {
						t.Errorf("wait=%v: %s, output %q; want the sleeper forked and timed out=%v", wait, res, res.Output, wait)
					}
					if left := waitGone(mark, 2*time.Second); len(left) > 0 {
						t.Errorf("wait=%v: processes left behind: %v", wait, left)
						for _, pid := range left {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				}
			})

			t.Run("killed at its CPU limit", func(t *testing.T) {
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: []string{"/box/spinner"},
					Limits: Limits{CPUSeconds: 1, Wall: 60 * time.Second}})
				if err != nil {
					t.Fatal(err)
				}
				if res.OK() || res.TimedOut || res.Signal == "" {
					t.Errorf("a spinning program: %s, want killed by a signal before the wall-clock limit", res)
				}
			})

			t.Run("killed at its wall-clock limit", func(t *testing.T) {
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: []string{"/usr/bin/sleep", "600"},
					Limits: Limits{Wall: time.Second}})
				if err != nil {
					t.Fatal(err)
				}
				if !res.TimedOut || res.OK() {
					t.Errorf("sleep 600 with a 1 s limit: %s", res)
				}
				if left := waitGone("600", 2*time.Second); len(left) > 0 {
					t.Errorf("sleep left behind: %v", left)
				}
			})

			t.Run("process limit", func(t *testing.T) {
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: []string{"/box/forker"},
					Limits: Limits{Procs: 8}})
				if err != nil {
					t.Fatal(err)
				}
				var n int
				if _, err := fmt.Sscanf(strings.TrimSpace(res.Output), "forked %d", &n); err != nil || n >= 8 {
					t.Errorf("a fork loop under a limit of 8 processes: %s, %q", res, res.Output)
				}
			})

			t.Run("memory limit", func(t *testing.T) {
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Argv: []string{"/box/hog"},
					Limits: Limits{MemoryMB: 256}})
				if err != nil {
					t.Fatal(err)
				}
				if res.OK() || !strings.Contains(res.Output, "malloc failed") {
					t.Errorf("2 GiB under a 256 MB limit: %s, %q", res, res.Output)
				}
			})

			t.Run("file size limit", func(t *testing.T) {
				res, err := sb.Run(context.Background(), Spec{Dir: dir, Limits: Limits{FileMB: 4},
					Argv: []string{"/usr/bin/sh", "-c", "head -c 8388608 /dev/zero > /tmp/big; echo size $(stat -c %s /tmp/big)"}})
				if err != nil {
					t.Fatal(err)
				}
				var size int
				if i := strings.LastIndex(res.Output, "size "); i < 0 {
					t.Fatalf("no size printed: %s, %q", res, res.Output)
				} else if _, err := fmt.Sscanf(res.Output[i:], "size %d", &size); err != nil || size > 4<<20 {
					t.Errorf("an 8 MiB file under a 4 MiB limit is %d bytes: %q", size, res.Output)
				}
			})

			t.Run("writable box", func(t *testing.T) {
				wdir := progDir(t)
				res, err := sb.Run(context.Background(), Spec{Dir: wdir, Writable: true,
					Argv: []string{"/usr/bin/sh", "-c", "echo made > /box/out && cat /box/out"}})
				if err != nil || !res.OK() || strings.TrimSpace(res.Output) != "made" {
					t.Fatalf("writing /box: %v, %s, %q", err, res, res.Output)
				}
				res, err = sb.Run(context.Background(), Spec{Dir: wdir, Argv: []string{"/usr/bin/sh", "-c", "echo again > /box/out"}})
				if err != nil || res.OK() {
					t.Errorf("a read-only /box was written: %v, %s", err, res)
				}
			})
		})
	}
}

func TestSandboxUnavailable(t *testing.T) {
	sb := &Sandbox{Bwrap: "/nonexistent/bwrap"}
	err := sb.Available(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "bubblewrap") {
		t.Errorf("missing bwrap: %v, want ErrUnavailable naming bubblewrap", err)
	}
	// A bubblewrap that cannot create namespaces: one refusing, as a kernel without user
	// namespaces makes it ("bwrap: No permissions to create new namespace…").
	fake := filepath.Join(progDir(t), "bwrap")
	script := "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	err = (&Sandbox{Bwrap: fake}).Available(context.Background())
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "No permissions to create new namespace") {
		t.Errorf("bwrap without namespaces: %v, want ErrUnavailable with bubblewrap's reason", err)
	}
}

// countAccepts accepts connections on ln until it is closed, counting them.
func countAccepts(ln net.Listener, n *atomic.Int32) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		n.Add(1)
		c.Close()
	}
}

// waitGone waits until no process has mark in its command line and returns those that stay.
func waitGone(mark string, timeout time.Duration) []int {
	deadline := time.Now().Add(timeout)
	for {
		var left []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cl, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err != nil || !strings.Contains(string(cl), "sleep\x00"+mark+"\x00") {
				continue
			}
			stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
			if f := strings.Fields(string(stat)); len(f) > 2 && f[2] == "Z" {
				continue
			}
			left = append(left, pid)
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestRootIsMountedReadsMountinfo(t *testing.T) {
	// A machine's own table, and a chroot's: there only the mounts under the chroot's root are
	// listed, relative to it, and none is on "/" (proc(5)).
	host := "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n28 27 0:5 / /proc rw - proc proc rw\n"
	chroot := "612 28 0:5 / /proc rw,relatime - proc proc rw\n"
	if !rootIsMounted(host) {
		t.Error("a table with a mount on / reads as without one")
	}
	if rootIsMounted(chroot) || rootIsMounted("") {
		t.Error("a table without a mount on / reads as with one")
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil && InChroot() == rootIsMounted(string(b)) {
		t.Error("InChroot disagrees with this process's own mountinfo")
	}
}
