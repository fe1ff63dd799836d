package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/hydra-lsp/hydra/checkers/agreement"
)

// rawEvent is the little of an event line the raw client reads.
type rawEvent struct {
	Event  string `json:"event"`
	Off    int    `json:"off"`
	ShimUS int64  `json:"shim_us"`
	Diag   string `json:"diag"`
}

// measureRaw streams p through the shim binary with no Go driver in between: a socket pair, the
// shim's wire protocol written and read by hand (checkers/clang/README.md), one chunk at a time.
// It returns, per chunk index after the preamble, the round trip and the shim's own time
// (shim_us), both in ms: the baseline that splits a line's latency into driver, transport and
// shim (breakdown_ms). The environment is the driver's (GLIBC_TUNABLES as checkers/clang sets it).
func measureRaw(ctx context.Context, shim string, p agreement.Program) (map[int][2]float64, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "raw"), os.NewFile(uintptr(fds[1]), "raw-shim")
	defer theirs.Close()
	conn, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	defer conn.Close()
	lr, lw, err := os.Pipe() // the lifeline: the shim exits when we do
	if err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	defer lw.Close()
	args := append([]string{"--channel-fd", "3", "--lifeline-fd", "4", "--session", "1", "--file", p.Base, "--"}, p.Flags...)
	cmd := exec.CommandContext(ctx, shim, args...)
	cmd.ExtraFiles = []*os.File{theirs, lr}
	cmd.Env = append(os.Environ(), "GLIBC_TUNABLES=glibc.malloc.hugetlb=1")
	if err := cmd.Start(); err != nil {
		lr.Close()
		return nil, fmt.Errorf("raw: %w", err)
	}
	lr.Close()
	theirs.Close()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	r := bufio.NewReaderSize(conn, 32<<10)
	next := func() (rawEvent, error) {
		_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		line, err := r.ReadBytes('\n')
		if err != nil {
			return rawEvent{}, err
		}
		var ev rawEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return rawEvent{}, err
		}
		if ev.Event == "error" || ev.Event == "crash" || ev.Event == "done" {
			return ev, fmt.Errorf("raw: %s %s", ev.Event, ev.Diag)
		}
		return ev, nil
	}
	if _, err := next(); err != nil { // init
		return nil, err
	}
	chs, first := codeChunks(p)
	out := map[int][2]float64{}
	buf := make([]byte, 0, 4096)
	for i, c := range chs {
		buf = append(buf[:0], `{"op":"submit","len":`...)
		buf = strconv.AppendInt(buf, int64(len(c.Text)), 10)
		buf = append(buf, "}\n"...)
		buf = append(buf, c.Text...)
		start := time.Now()
		if _, err := conn.Write(buf); err != nil {
			return nil, fmt.Errorf("raw: %w", err)
		}
		for {
			ev, err := next()
			if err != nil {
				return nil, err
			}
			if ev.Event == "progress" && ev.Off >= c.End() {
				if i >= first {
					out[i] = [2]float64{ms(time.Since(start)), float64(ev.ShimUS) / 1000}
				}
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("raw: no chunk after the preamble")
	}
	return out, nil
}
