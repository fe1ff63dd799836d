// channel.cpp: reading the driver's messages (channel.h).

#include "channel.h"
#include "events.h"
#include "lifeline.h"
#include "ring.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hydra {

void Channel::reset(int Fd, int SpinUs, bool UseRing) {
  this->Fd = Fd;
  this->SpinUs = SpinUs;
  this->UseRing = UseRing;
  Eof = false;
  SpinSkip = SpinBackoff = SpinFails = 0;
  Buf.clear();
  Pos = 0;
  Scanned = 0;
  closeFds();
}

int Channel::takeFd() {
  if (Fds.empty())
    return -1;
  int F = Fds.front();
  Fds.erase(Fds.begin());
  return F;
}

void Channel::closeFds() {
  for (int F : Fds)
    close(F);
  Fds.clear();
}

bool Channel::readLine(std::string &Line, int TimeoutMs) {
  for (;;) {
    size_t NL = Buf.find('\n', std::max(Pos, Scanned));
    if (NL != std::string::npos) {
      Line.assign(Buf, Pos, NL - Pos);
      Pos = NL + 1;
      Scanned = Pos;
      compact();
      return true;
    }
    Scanned = Buf.size();
    if (!fill(TimeoutMs))
      return false;
  }
}

bool Channel::readBytes(size_t N, std::string &Out) {
  while (Buf.size() - Pos < N)
    if (!fill(-1))
      return false;
  Out.assign(Buf, Pos, N);
  Pos += N;
  Scanned = Pos;
  compact();
  return true;
}

void Channel::compact() {
  if (Pos > 0 && (Pos == Buf.size() || Pos > (1u << 20))) {
    Buf.erase(0, Pos);
    Scanned -= std::min(Scanned, Pos);
    Pos = 0;
  }
}

ssize_t Channel::recvSome(int Flags) {
  alignas(cmsghdr) char Ctl[CMSG_SPACE(sizeof(int) * 8)];
  iovec Iov{Tmp, sizeof(Tmp)};
  msghdr MH{};
  MH.msg_iov = &Iov;
  MH.msg_iovlen = 1;
  MH.msg_control = Ctl;
  MH.msg_controllen = sizeof(Ctl);
  ssize_t R = recvmsg(Fd, &MH, MSG_CMSG_CLOEXEC | Flags);
  for (cmsghdr *CM = R >= 0 ? CMSG_FIRSTHDR(&MH) : nullptr; CM; CM = CMSG_NXTHDR(&MH, CM))
    if (CM->cmsg_level == SOL_SOCKET && CM->cmsg_type == SCM_RIGHTS)
      for (size_t I = 0; I < (CM->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++I) {
        int F;
        memcpy(&F, CMSG_DATA(CM) + I * sizeof(int), sizeof(int));
        Fds.push_back(F);
      }
  if (R > 0)
    Buf.append(Tmp, size_t(R));
  return R;
}

int Channel::spin() {
  if (SpinSkip > 0) {
    --SpinSkip;
    return -1;
  }
  auto Until = std::chrono::steady_clock::now() + std::chrono::microseconds(SpinUs);
  bool Waited = false;
  do {
    ssize_t R = recvSome(MSG_DONTWAIT);
    if (R > 0) {
      if (Waited)
        spunAndGot();
      return 1;
    }
    if (R == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      return 0;
    Waited = true;
    __builtin_ia32_pause();
  } while (std::chrono::steady_clock::now() < Until);
  spunOut();
  return -1;
}

void Channel::spunAndGot() {
  SpinFails = 0;
  SpinBackoff /= 2;
}

void Channel::spunOut() {
  if (++SpinFails >= kSpinFailsToBackOff)
    SpinSkip = SpinBackoff = std::min(2 * SpinBackoff + 1, kMaxSpinSkip);
}

bool Channel::spinRing() {
  if (SpinSkip > 0) {
    --SpinSkip;
    return false;
  }
  auto Until = std::chrono::steady_clock::now() + std::chrono::microseconds(SpinUs);
  for (;;) {
    for (int I = 0; I < 64; ++I) {
      if (gRing.pending()) {
        spunAndGot();
        return true;
      }
      __builtin_ia32_pause();
    }
    if (std::chrono::steady_clock::now() >= Until)
      break;
  }
  spunOut();
  return false;
}

bool Channel::fillRing(int TimeoutMs) {
  bool Spun = false;
  for (;;) {
    long R = gRing.read(Tmp, sizeof(Tmp));
    if (R < 0)
      return false; // the driver's indices are out of range: treat it as gone
    if (R > 0) {
      Buf.append(Tmp, size_t(R));
      return true;
    }
    if (Eof)
      return false;
    if (SpinUs > 0 && TimeoutMs < 0 && !Spun) {
      Spun = true;
      if (spinRing())
        continue;
    }
    gRing.setShimWaiting(true);
    if (gRing.pending()) {
      gRing.setShimWaiting(false);
      continue;
    }
    pollfd P[2] = {{Fd, POLLIN, 0}, {gLifeline, POLLIN, 0}};
    int N = poll(P, gLifeline >= 0 ? 2 : 1, TimeoutMs);
    gRing.setShimWaiting(false);
    if (N < 0 && errno != EINTR)
      return false;
    if (N == 0)
      return false; // timeout
    if (N > 0 && gLifeline >= 0 && P[1].revents)
      _exit(0); // the owner is gone
    if (N > 0 && P[0].revents) {
      // Wake-up bytes only: the driver sends a session no descriptors (and any would be
      // closed with the message that reads them, as on the socket).
      char Drain[64];
      ssize_t K = recv(Fd, Drain, sizeof(Drain), MSG_DONTWAIT);
      if (K == 0 || (K < 0 && errno != EAGAIN && errno != EINTR))
        Eof = true; // hung up: what is left in the ring is still read first
    }
  }
}

bool Channel::fill(int TimeoutMs) {
  if (UseRing)
    return fillRing(TimeoutMs);
  if (SpinUs > 0 && TimeoutMs < 0) {
    int R = spin();
    if (R >= 0)
      return R == 1;
  }
  for (;;) {
    pollfd P[2] = {{Fd, POLLIN, 0}, {gLifeline, POLLIN, 0}};
    int N = poll(P, gLifeline >= 0 ? 2 : 1, TimeoutMs);
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (N == 0)
      return false; // timeout
    if (gLifeline >= 0 && P[1].revents)
      _exit(0); // the owner is gone (the lifeline never carries data)
    if (P[0].revents) {
      ssize_t R = recvSome(0);
      if (R < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      return R > 0;
    }
  }
}

namespace {

// parseSubmitHeader reads a submit line exactly as the driver writes it by hand
// (checkers/clang/wire.go, submitLine): {"op":"submit","len":N[,"cat":"WORD"][,"chkpt":N]
// [,"keep_going":true]}, setting Len to the length of the chunk's bytes that follow. False, M
// untouched, for anything else, which llvm::json then parses.
// It allocates nothing beyond the category: after a checkpoint's fork, every heap chunk that
// llvm::json's parse took from malloc's free lists was a page copied out of the checkpoint.
bool parseSubmitHeader(llvm::StringRef L, Msg &M, size_t &Len) {
  int64_t N = 0, Chkpt = 0;
  llvm::StringRef Cat;
  bool KeepGoing = false;
  auto Int = [&L](int64_t &V) {
    size_t D = 0;
    while (D < L.size() && D < 18 && llvm::isDigit(L[D]))
      ++D;
    if (D == 0)
      return false;
    L.substr(0, D).getAsInteger(10, V);
    L = L.drop_front(D);
    return true;
  };
  if (!L.consume_front(R"({"op":"submit","len":)") || !Int(N))
    return false;
  if (L.consume_front(R"(,"cat":")")) {
    size_t Q = L.find('"');
    if (Q == llvm::StringRef::npos || !plainWord(L.substr(0, Q)))
      return false;
    Cat = L.substr(0, Q);
    L = L.drop_front(Q + 1);
  }
  if (L.consume_front(R"(,"chkpt":)") && !Int(Chkpt))
    return false;
  if (L.consume_front(R"(,"keep_going":true)"))
    KeepGoing = true;
  if (L != "}")
    return false;
  M.K = Msg::Submit;
  M.Cat = Cat.str();
  M.Chkpt = Chkpt;
  M.KeepGoing = KeepGoing;
  Len = size_t(N);
  return true;
}

} // namespace

Msg readMsg(Channel &C, int TimeoutMs) {
  Msg M;
  // One line buffer for the process, not one allocation per message (see parseSubmitHeader).
  static std::string Line;
  if (!C.readLine(Line, TimeoutMs))
    return M; // Gone
  if (size_t Len; parseSubmitHeader(Line, M, Len)) {
    if (!C.readBytes(Len, M.Text))
      M.K = Msg::Gone;
    return M;
  }
  auto V = llvm::json::parse(Line);
  if (!V) {
    M.K = Msg::Bad;
    M.Err = "bad message: " + llvm::toString(V.takeError());
    return M;
  }
  const llvm::json::Object *O = V->getAsObject();
  if (!O) {
    M.K = Msg::Bad;
    M.Err = "bad message: not an object";
    return M;
  }
  llvm::StringRef Op = O->getString("op").value_or("");
  if (Op == "submit") {
    M.K = Msg::Submit;
    M.Cat = O->getString("cat").value_or("").str();
    M.Chkpt = O->getInteger("chkpt").value_or(0);
    M.KeepGoing = O->getBoolean("keep_going").value_or(false);
    if (auto Len = O->getInteger("len")) {
      if (*Len < 0 || !C.readBytes(size_t(*Len), M.Text))
        M.K = Msg::Gone;
    } else {
      M.Text = O->getString("delta").value_or("").str();
    }
  } else if (Op == "eos") {
    M.K = Msg::Eos;
  } else if (Op == "resume") {
    M.K = Msg::Resume;
    M.ID = O->getInteger("id").value_or(0);
  } else if (Op == "free") {
    M.K = Msg::Free;
  } else {
    M.K = Msg::Bad;
    M.Err = "bad message: unknown op \"" + Op.str() + "\"";
  }
  return M;
}

} // namespace hydra
