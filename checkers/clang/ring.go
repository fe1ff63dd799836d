package clang

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The layout of a session's shared-memory ring, as checkers/clang/shim/ring.h spells it: four
// free-running byte counts, each on its own cache line, two waiting flags, then the
// driver→shim bytes ("down") and the shim→driver bytes ("up").
const (
	ringDownW, ringDownR, ringUpW, ringUpR = 0, 64, 128, 192
	ringShimWaiting, ringDriverWaiting     = 256, 320
	ringHeader                             = 4096
	ringDownCap                            = 256 << 10
	ringUpCap                              = 64 << 10
	ringSize                               = ringHeader + ringDownCap + ringUpCap
)

// errRingIndex is what a ring whose indices are out of range reads as: the shim wrote past
// what the protocol allows, which only a broken shim does.
var errRingIndex = errors.New("checker protocol error: the channel's shared ring has indices out of range")

// shmRing is the driver's mapping of a session's ring: a memfd shared with the shim that
// carries the same bytes as the channel's socket would, so that a side that spins sees the
// other's bytes with no system call (docs/checker-benchmark.md, "Chunks and events through
// shared memory"). The socket stays for what the ring cannot do: a wake-up byte when a reader
// said it would sleep, the descriptors some events bring, and hang-up. One goroutine reads and
// one writes at a time (fdConn's reader and the session's writer, under its lock).
type shmRing struct {
	mem []byte
}

// newShmRing makes a ring and returns it with the memfd to hand to the shim (the caller closes
// the file once the shim has it).
func newShmRing() (*shmRing, *os.File, error) {
	fd, err := unix.MemfdCreate("hydra-ring", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, fmt.Errorf("shared ring: memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "hydra-ring")
	if err := f.Truncate(ringSize); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("shared ring: %w", err)
	}
	mem, err := unix.Mmap(fd, 0, ringSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("shared ring: mmap: %w", err)
	}
	return &shmRing{mem: mem}, f, nil
}

// unmap releases the mapping; nothing may use the ring after it.
func (r *shmRing) unmap() {
	if r.mem != nil {
		_ = unix.Munmap(r.mem)
		r.mem = nil
	}
}

// The mapping is page-aligned, so every index and flag is aligned for atomic access.
func (r *shmRing) index(off int) *atomic.Uint64 {
	return (*atomic.Uint64)(unsafe.Pointer(&r.mem[off]))
}

func (r *shmRing) flag(off int) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&r.mem[off]))
}

// read moves up to len(p) bytes the shim wrote into p and returns how many (0: none yet).
func (r *shmRing) read(p []byte) (int, error) {
	rd := r.index(ringUpR).Load()
	n := r.index(ringUpW).Load() - rd
	if n > ringUpCap {
		return 0, errRingIndex
	}
	n = min(n, uint64(len(p)))
	data := r.mem[ringHeader+ringDownCap:]
	for done := uint64(0); done < n; {
		at := (rd + done) % ringUpCap
		done += uint64(copy(p[done:n], data[at:]))
	}
	r.index(ringUpR).Store(rd + n)
	return int(n), nil
}

// write copies what fits of p for the shim and returns how much (0: the ring is full). It
// reports whether the shim said it would sleep (and so must be sent a wake-up byte).
func (r *shmRing) write(p []byte) (n int, wake bool, err error) {
	w := r.index(ringDownW).Load()
	used := w - r.index(ringDownR).Load()
	if used > ringDownCap {
		return 0, false, errRingIndex
	}
	k := min(ringDownCap-used, uint64(len(p)))
	if k == 0 {
		return 0, false, nil
	}
	data := r.mem[ringHeader : ringHeader+ringDownCap]
	for done := uint64(0); done < k; {
		at := (w + done) % ringDownCap
		done += uint64(copy(data[at:], p[done:k]))
	}
	// Sequentially consistent, as every Go atomic: the index is stored before the flag is
	// looked at, and the shim stores its flag before it looks at the index (shim/ring.cpp).
	r.index(ringDownW).Store(w + k)
	return int(k), r.flag(ringShimWaiting).Swap(0) == 1, nil
}

// pending reports whether the shim wrote bytes not read yet.
func (r *shmRing) pending() bool {
	return r.index(ringUpW).Load() != r.index(ringUpR).Load()
}

// setDriverWaiting says whether the reader is about to block on the socket (the shim's next
// write then sends it a wake-up byte).
func (r *shmRing) setDriverWaiting(on bool) {
	v := uint32(0)
	if on {
		v = 1
	}
	r.flag(ringDriverWaiting).Store(v)
}
