package benchmark

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hydra-lsp/hydra/checkers/agreement"
	"github.com/hydra-lsp/hydra/checkers/clang"
)

// rawEvent is the little of an event line the raw client reads.
type rawEvent struct {
	Event  string `json:"event"`
	Off    int    `json:"off"`
	ShimUS int64  `json:"shim_us"`
	Diag   string `json:"diag"`
}

// rawReadTimeout bounds each read of the raw client: a shim that stops answering fails the
// measurement instead of hanging it.
const rawReadTimeout = 60 * time.Second

// rawShim is a shim started on one end of a channel (checkers/clang's RawChannel), for the
// raw client to speak its wire protocol (checkers/clang/README.md) by hand.
type rawShim struct {
	cmd      *exec.Cmd
	ch       *clang.RawChannel
	lifeline *os.File // the shim exits when it is closed
}

// startRaw starts the shim binary on p's file and flags, its channel as the driver makes one
// (the shared-memory ring unless socketOnly; reads spinning for up to spin). The environment is
// the driver's (GLIBC_TUNABLES as checkers/clang sets it, and HYDRA_SHIM_SPIN_US when spin > 0).
func startRaw(ctx context.Context, shim string, p agreement.Program, spin time.Duration, socketOnly bool) (*rawShim, error) {
	ch, theirs, ring, err := clang.NewRawChannel(spin, socketOnly)
	if err != nil {
		return nil, fmt.Errorf("raw: %w", err)
	}
	defer theirs.Close()
	if ring != nil {
		defer ring.Close()
	}
	if err := ch.SetReadTimeout(rawReadTimeout); err != nil {
		ch.Close()
		return nil, fmt.Errorf("raw: %w", err)
	}
	lr, lw, err := os.Pipe()
	if err != nil {
		ch.Close()
		return nil, fmt.Errorf("raw: %w", err)
	}
	defer lr.Close()
	cmd := clang.ShimProcess{
		Channel: theirs, Lifeline: lr, Ring: ring, Session: 1, File: p.Base, Flags: p.Flags,
	}.Command(ctx, shim)
	cmd.Env = append(os.Environ(), "GLIBC_TUNABLES=glibc.malloc.hugetlb=1")
	if spin > 0 {
		cmd.Env = append(cmd.Env, "HYDRA_SHIM_SPIN_US="+strconv.FormatInt(spin.Microseconds(), 10))
	}
	if err := cmd.Start(); err != nil {
		ch.Close()
		lw.Close()
		return nil, fmt.Errorf("raw: %w", err)
	}
	return &rawShim{cmd: cmd, ch: ch, lifeline: lw}, nil
}

// close kills the shim and releases our ends.
func (r *rawShim) close() {
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	r.lifeline.Close()
	r.ch.Close()
}

// measureRaw streams p through the shim binary with no Go driver in between: the shim's wire
// protocol written and read by hand on a channel as the driver makes one (the shared-memory ring
// unless socketOnly; clang.RawChannel), one chunk at a time, both sides spinning for up to spin
// before they block, backing off as the driver's reader and the shim's do (clang.SpinGate). It
// returns, per chunk index after the preamble, the round trip and the shim's own time
// (shim_us), both in ms: the baseline that splits a line's latency into driver, transport and
// shim (breakdown_ms).
func measureRaw(ctx context.Context, shim string, p agreement.Program, pace, spin time.Duration, socketOnly bool) (map[int][2]float64, error) {
	rs, err := startRaw(ctx, shim, p, spin, socketOnly)
	if err != nil {
		return nil, err
	}
	defer rs.close()
	return streamRaw(rs.ch, p, pace)
}

// measureRawOneProcessor is measureRaw with the client and the shim on one processor: the client
// runs on a thread of its own, bound with the shim to the first processor that thread may use,
// so that each side wakes the other on the processor it is on. Where waking another processor
// costs (an idle virtual CPU that halts), this is the floor of the round trip; the driver itself
// does not do this, because its events go to goroutines that run on any processor
// (docs/checker-benchmark.md). Neither side spins: on one processor a spinner holds the
// processor the other side needs.
func measureRawOneProcessor(ctx context.Context, shim string, p agreement.Program, pace time.Duration, socketOnly bool) (map[int][2]float64, error) {
	type result struct {
		out map[int][2]float64
		err error
	}
	done := make(chan result, 1)
	go func() {
		// The thread stays locked: it ends with this goroutine, so its binding never reaches
		// another goroutine.
		runtime.LockOSThread()
		out, err := func() (map[int][2]float64, error) {
			var set unix.CPUSet
			if err := unix.SchedGetaffinity(0, &set); err != nil {
				return nil, fmt.Errorf("raw, one processor: %w", err)
			}
			cpu := 0
			for cpu < maxCPUSetID && !set.IsSet(cpu) {
				cpu++
			}
			if cpu == maxCPUSetID {
				return nil, errors.New("raw, one processor: this thread may run on no processor below 1024")
			}
			set.Zero()
			set.Set(cpu)
			if err := unix.SchedSetaffinity(0, &set); err != nil {
				return nil, fmt.Errorf("raw, one processor: bind the client to processor %d: %w", cpu, err)
			}
			rs, err := startRaw(ctx, shim, p, 0, socketOnly)
			if err != nil {
				return nil, err
			}
			defer rs.close()
			if err := unix.SchedSetaffinity(rs.cmd.Process.Pid, &set); err != nil {
				return nil, fmt.Errorf("raw, one processor: bind the shim to processor %d: %w", cpu, err)
			}
			return streamRaw(rs.ch, p, pace)
		}()
		done <- result{out, err}
	}()
	// A cancelled ctx kills the shim (CommandContext), which ends a blocked read.
	r := <-done
	return r.out, r.err
}

// maxCPUSetID is one past the highest processor a unix.CPUSet can name.
const maxCPUSetID = 1024

// streamRaw submits p's chunks one at a time on rw and waits for each chunk's progress line,
// pausing for pace before each chunk after the first (Config.Pace). It returns, per chunk index
// after the preamble, the round trip and shim_us, both in ms.
func streamRaw(rw *clang.RawChannel, p agreement.Program, pace time.Duration) (map[int][2]float64, error) {
	r := bufio.NewReaderSize(rw, 32<<10)
	next := func() (rawEvent, error) {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return rawEvent{}, fmt.Errorf("raw: %w", err)
		}
		var ev rawEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return rawEvent{}, fmt.Errorf("raw: %w", err)
		}
		rw.Settle(ev.Event == "progress", time.Duration(ev.ShimUS)*time.Microsecond)
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
		if i > 0 && pace > 0 {
			time.Sleep(pace)
		}
		start := time.Now()
		if _, err := rw.Write(buf); err != nil {
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
