// ring.h: the shared-memory half of a session's channel (ring.cpp). The driver's half is
// checkers/clang/ring.go; the layout below must match it byte for byte.
#pragma once
#include <cstddef>
#include <cstdint>

// Ring is a memfd the driver maps too: two single-producer, single-consumer byte rings, one per
// direction, that carry exactly the bytes the channel's socket would carry (the wire protocol of
// main.cpp). The socket stays: it carries a wake-up byte when a reader said it would sleep, the
// descriptors that come with some events, and the hang-up of either side.
class Ring {
public:
  // Layout: four indices (free-running byte counts, each on its own cache line), two flags, then
  // the driver→shim ring ("down") and the shim→driver ring ("up").
  static constexpr size_t kDownW = 0, kDownR = 64, kUpW = 128, kUpR = 192;
  static constexpr size_t kShimWaiting = 256, kDriverWaiting = 320;
  static constexpr size_t kHeader = 4096, kDownCap = 256 << 10, kUpCap = 64 << 10;
  static constexpr size_t kSize = kHeader + kDownCap + kUpCap;

  // map maps the ring from Fd (which the caller still owns); false if it cannot.
  bool map(int Fd);
  // unmap drops the mapping (a dormant checkpoint has no channel).
  void unmap();
  bool mapped() const { return Base != nullptr; }

  // read moves up to Max bytes the driver wrote into Out: their number, or -1 if the driver's
  // indices are out of range.
  long read(char *Out, size_t Max);
  // pending reports whether the driver has written bytes not read yet.
  bool pending() const;
  // setShimWaiting says whether this side is about to block on the socket for more (the
  // driver's write then sends a wake-up byte).
  void setShimWaiting(bool On);
  // write copies what fits of P[0:N] to the driver and returns how much; if the driver said it
  // would sleep, it sends it a wake-up byte on WakeFd. Async-signal-safe (the crash handler).
  size_t write(const char *P, size_t N, int WakeFd);

private:
  uint64_t *u64(size_t Off) const { return reinterpret_cast<uint64_t *>(Base + Off); }
  uint32_t *u32(size_t Off) const { return reinterpret_cast<uint32_t *>(Base + Off); }
  char *Base = nullptr;
};

// gRing is the current session's ring (unmapped when the channel is a plain socket: a dormant
// checkpoint, or a driver that passed none).
extern Ring gRing;
