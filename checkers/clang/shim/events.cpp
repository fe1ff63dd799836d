// events.cpp: event lines to the driver (events.h).

#include "events.h"
#include "lifeline.h"
#include "ring.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace hydra {

volatile int gChanFd = -1;

namespace {

bool writeAll(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

// chanWrite writes P[0:N] to the session's channel: into the ring when the driver passed one
// (waiting for room while it is full), else on the socket. False if the driver is gone.
bool chanWrite(const char *P, size_t N) {
  if (!gRing.mapped())
    return writeAll(gChanFd, P, N);
  for (;;) {
    size_t W = gRing.write(P, N, gChanFd);
    P += W;
    N -= W;
    if (N == 0)
      return true;
    // Full: the driver reads every event as it comes, so this is rare; look again every
    // millisecond, and give up when the driver hangs up.
    pollfd Q[2] = {{gChanFd, POLLRDHUP, 0}, {gLifeline, POLLIN, 0}};
    if (poll(Q, gLifeline >= 0 ? 2 : 1, 1) > 0) {
      if (Q[0].revents & (POLLRDHUP | POLLHUP | POLLERR))
        return false;
      if (gLifeline >= 0 && Q[1].revents)
        _exit(0);
    }
  }
}

// sendFds writes the first byte of P with the descriptors Fds attached (SCM_RIGHTS), then the
// rest. On a stream socket the descriptors arrive no later than that byte. With a ring, the
// descriptors go alone on the socket (with one byte the driver ignores) before the whole line
// goes into the ring, so they are there by the time the driver reads the line.
bool sendFds(int Sock, const char *P, size_t N, std::initializer_list<int> Fds) {
  bool Ring = gRing.mapped();
  alignas(cmsghdr) char Ctl[CMSG_SPACE(sizeof(int) * 4)] = {};
  size_t K = Fds.size();
  iovec Iov{const_cast<char *>(Ring ? "F" : P), 1};
  msghdr MH{};
  MH.msg_iov = &Iov;
  MH.msg_iovlen = 1;
  MH.msg_control = Ctl;
  MH.msg_controllen = CMSG_SPACE(sizeof(int) * K);
  cmsghdr *CM = CMSG_FIRSTHDR(&MH);
  CM->cmsg_level = SOL_SOCKET;
  CM->cmsg_type = SCM_RIGHTS;
  CM->cmsg_len = CMSG_LEN(sizeof(int) * K);
  memcpy(CMSG_DATA(CM), Fds.begin(), sizeof(int) * K);
  for (;;) {
    ssize_t W = sendmsg(Sock, &MH, MSG_NOSIGNAL);
    if (W == 1)
      break;
    if (W < 0 && errno == EINTR)
      continue;
    return false;
  }
  return Ring ? chanWrite(P, N) : writeAll(Sock, P + 1, N - 1);
}

} // namespace

bool plainWord(llvm::StringRef S) {
  return llvm::all_of(S, [](char C) { return llvm::isAlnum(C) || C == '_' || C == '-'; });
}

void sendObject(llvm::json::Object Obj, std::initializer_list<int> Fds) {
  if (gChanFd < 0)
    return;
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::json::Value(std::move(Obj));
  OS.flush();
  S.push_back('\n');
  bool OK = Fds.size() > 0 ? sendFds(gChanFd, S.data(), S.size(), Fds)
                           : chanWrite(S.data(), S.size());
  if (!OK)
    _exit(0);
}

int pidfdOpen(pid_t Pid) { return int(syscall(SYS_pidfd_open, Pid, 0)); }

void send(std::initializer_list<llvm::json::Object::KV> KVs, std::initializer_list<int> Fds) {
  sendObject(llvm::json::Object(KVs), Fds);
}

void sendProgress(int64_t Off, const std::string &Cat, int64_t Us, int64_t Faults) {
  if (gChanFd < 0)
    return;
  char Line[256];
  int N = plainWord(Cat) && Cat.size() < 128
              ? snprintf(Line, sizeof Line,
                         "{\"cat\":\"%s\",\"event\":\"progress\",\"off\":%lld,\"shim_faults\":%lld,"
                         "\"shim_us\":%lld}\n",
                         Cat.c_str(), (long long)Off, (long long)Faults, (long long)Us)
              : -1;
  if (N < 0 || size_t(N) >= sizeof Line) {
    send({{"event", "progress"}, {"off", Off}, {"cat", Cat}, {"shim_us", Us}, {"shim_faults", Faults}});
    return;
  }
  if (!chanWrite(Line, size_t(N)))
    _exit(0);
}

} // namespace hydra
