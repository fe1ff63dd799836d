// ring.cpp: the shared-memory half of a session's channel (ring.h, checkers/clang/ring.go).
//
// A chunk on the socket alone costs four system calls (the driver's write, the shim's read, the
// event's write and read) and, when a side has blocked, a wake-up; over the ring a side that is
// spinning sees the other's bytes without any. The ordering that keeps a reader from sleeping
// through a write is the usual one: the reader stores its waiting flag and then looks at the
// write index; the writer stores the write index and then swaps the flag back to 0. All four are
// sequentially consistent, so at least one side sees the other's store: either the reader finds
// the bytes, or the writer finds the flag and sends the wake-up byte (at worst one byte too many,
// which the reader drains and ignores).

#include "ring.h"

#include <cerrno>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

Ring gRing;

bool Ring::map(int Fd) {
  void *P = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_SHARED, Fd, 0);
  if (P == MAP_FAILED)
    return false;
  unmap();
  Base = static_cast<char *>(P);
  return true;
}

void Ring::unmap() {
  if (Base)
    munmap(Base, kSize);
  Base = nullptr;
}

bool Ring::pending() const {
  return __atomic_load_n(u64(kDownW), __ATOMIC_SEQ_CST) != __atomic_load_n(u64(kDownR), __ATOMIC_RELAXED);
}

long Ring::read(char *Out, size_t Max) {
  uint64_t R = __atomic_load_n(u64(kDownR), __ATOMIC_RELAXED); // ours alone
  uint64_t W = __atomic_load_n(u64(kDownW), __ATOMIC_ACQUIRE);
  if (W - R > kDownCap)
    return -1;
  size_t N = size_t(W - R) < Max ? size_t(W - R) : Max;
  const char *Data = Base + kHeader;
  for (size_t Done = 0; Done < N;) {
    size_t At = size_t((R + Done) % kDownCap);
    size_t Run = kDownCap - At < N - Done ? kDownCap - At : N - Done;
    __builtin_memcpy(Out + Done, Data + At, Run);
    Done += Run;
  }
  __atomic_store_n(u64(kDownR), R + N, __ATOMIC_RELEASE);
  return long(N);
}

void Ring::setShimWaiting(bool On) { __atomic_store_n(u32(kShimWaiting), On ? 1u : 0u, __ATOMIC_SEQ_CST); }

size_t Ring::write(const char *P, size_t N, int WakeFd) {
  uint64_t W = __atomic_load_n(u64(kUpW), __ATOMIC_RELAXED); // ours alone
  uint64_t R = __atomic_load_n(u64(kUpR), __ATOMIC_ACQUIRE);
  uint64_t Used = W - R;
  if (Used > kUpCap)
    return 0; // the driver's index is out of range: nothing fits
  size_t Room = size_t(kUpCap - Used);
  size_t K = N < Room ? N : Room;
  char *Data = Base + kHeader + kDownCap;
  for (size_t Done = 0; Done < K;) {
    size_t At = size_t((W + Done) % kUpCap);
    size_t Run = kUpCap - At < K - Done ? kUpCap - At : K - Done;
    __builtin_memcpy(Data + At, P + Done, Run);
    Done += Run;
  }
  if (K > 0) {
    __atomic_store_n(u64(kUpW), W + K, __ATOMIC_SEQ_CST);
    if (__atomic_exchange_n(u32(kDriverWaiting), 0u, __ATOMIC_SEQ_CST) == 1u) {
      int Saved = errno;
      ssize_t Ignored = send(WakeFd, "w", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)Ignored;
      errno = Saved;
    }
  }
  return K;
}
