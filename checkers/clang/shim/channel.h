// channel.h: what the shim reads from the driver (channel.cpp): the messages of the wire
// protocol (main.cpp) on a session's channel or a checkpoint's control socket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace hydra {

// Channel reads JSON-line messages (and raw submit payloads) from one socket, waiting in poll()
// together with the lifeline so that a dead owner ends the process even while it is idle.
// Descriptors that arrive with the data (SCM_RIGHTS: a resume's channel) are kept in order.
class Channel {
public:
  // reset makes Fd the channel. SpinUs > 0: before blocking in poll() for more data, try to
  // read for up to that many microseconds (an active session's channel: the driver usually
  // sends the next chunk within a few microseconds of reading a progress event, and a process
  // that went to sleep pays a wake-up, which on a loaded or virtualised machine costs tens of
  // microseconds; docs/checker-benchmark.md, lever "spin before blocking").
  // UseRing: the bytes come through gRing, the socket only wakes us (ring.h).
  void reset(int Fd, int SpinUs = 0, bool UseRing = false);
  int fd() const { return Fd; }

  // takeFd returns the oldest descriptor received and not yet taken, or -1.
  int takeFd();
  void closeFds();

  // readLine reads up to the next '\n'. False on EOF, error or timeout (TimeoutMs >= 0).
  bool readLine(std::string &Line, int TimeoutMs = -1);

  // readBytes reads exactly N bytes.
  bool readBytes(size_t N, std::string &Out);

private:
  void compact();

  // recvSome receives what is there (Flags: MSG_DONTWAIT to not block), keeping descriptors.
  ssize_t recvSome(int Flags);

  // spin tries non-blocking reads for up to SpinUs microseconds: 1 when data came, 0 at EOF or
  // on an error, -1 when nothing came (then block as usual). It backs off as the driver's
  // reader does (SpinGate in checkers/clang/fds.go): from the kSpinFailsToBackOff-th spin in a
  // row that runs out, each doubles the number of waits after it that block at once (up to
  // kMaxSpinSkip); a spin that gets the chunk halves it.
  int spin();
  void spunAndGot();
  void spunOut();

  // spinRing watches the ring for up to SpinUs microseconds, with no system call: true when
  // bytes came (backing off as spin does).
  bool spinRing();

  // fillRing is fill for a channel whose bytes come through gRing: read what is there, else
  // spin, else say we sleep and block on the socket (with the lifeline) for the wake-up byte.
  bool fillRing(int TimeoutMs);

  bool fill(int TimeoutMs);

  static inline char Tmp[1 << 16];
  int Fd = -1;
  int SpinUs = 0;
  bool UseRing = false; // see reset
  bool Eof = false;     // the ring's socket hung up
  static constexpr int kMaxSpinSkip = 64, kSpinFailsToBackOff = 3;
  // spin's back-off: waits left that block at once, how many the latest back-off made, and the
  // spins in a row that ran out.
  int SpinSkip = 0, SpinBackoff = 0, SpinFails = 0;
  std::vector<int> Fds; // received descriptors, oldest first
  std::string Buf;
  size_t Pos = 0;     // start of unread data
  size_t Scanned = 0; // no '\n' in Buf[Pos:Scanned]
};

// Msg is one engine → shim message.
struct Msg {
  enum Kind { Submit, Eos, Resume, Free, Gone, Bad } K = Gone;
  std::string Text, Cat, Err;
  int64_t Chkpt = 0, ID = 0;
  bool KeepGoing = false;
};

// readMsg reads the next message from C (Gone on EOF, error or timeout, Bad for a line it cannot
// read). Submit lines as the driver writes them are read by hand (parseSubmitHeader), anything
// else through llvm::json.
Msg readMsg(Channel &C, int TimeoutMs = -1);

} // namespace hydra
