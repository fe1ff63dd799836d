// hydra-clang-shim: an incremental, checkpointable Clang checker session (checkers/clang/README.md).
//
// One process runs one ordinary Clang front end (-fsyntax-only) over a main file whose only
// content is `#pragma hydra_next`. The text to check arrives in chunks on a channel (a UNIX
// stream socket, fd given on the command line, and a shared-memory ring beside it that carries
// the bytes when the driver passes one: ring.h) and is pulled into the preprocessor one chunk at a
// time, each time the previous chunk ends. While the process is blocked waiting for the next chunk,
// compiler state and accepted text agree exactly; a fork() at that moment is a checkpoint: the
// child stays dormant on a private control socket whose only other end is passed to the driver
// (SCM_RIGHTS, with the event that announces the checkpoint) and, for every `resume` on it, forks
// a grandchild that takes the channel passed along with the resume as its own and carries on
// parsing from there. Nothing listens anywhere: no other process can reach a checkpoint.
//
// Wire protocol (one JSON object per line):
//   engine → session   {"op":"submit","len":N,"cat":"…","chkpt":ID?,"keep_going":B?}\n followed by N raw bytes
//                      (or {"op":"submit","delta":"…",…} with the text inline, valid UTF-8 only),
//                      {"op":"eos"}
//   engine → dormant   {"op":"resume","id":SESSION} + the new session's channel (SCM_RIGHTS);
//                      {"op":"free"} or closing the control socket ends the checkpoint
//   shim → engine      {"event":"init"|"progress"|"error"|"chkpt"|"done"|"crash", …} as the Go
//                      type checkers.Event spells them. A chkpt event carries two descriptors
//                      (SCM_RIGHTS): the checkpoint's control socket and its pidfd; the init of a
//                      resumed session carries its own pidfd, so that the driver signals only
//                      processes whose identity is verified.
// Offsets are bytes of the checked text; the injected `#line` prefix of each chunk never counts.
//
// Processes never outlive their owner: every process polls a "lifeline" pipe (the owner keeps the
// only write end) together with its channel or control socket and exits on hang-up; an active
// session also runs a watchdog thread that does the same (and watches the channel for hang-up)
// while the parser is busy, so a long parse ends with its owner too; the first process gets
// PR_SET_PDEATHSIG from its starter, a resumed session from the dormant checkpoint it forks from.
//
// Clang extension points used, each in its own class below:
//   NextChunkPragma  (PragmaHandler)      starts the stream from the main buffer;
//   ChunkFeeder      (PPCallbacks)        pulls the next chunk when the previous one ends;
//   ErrorReporter    (DiagnosticConsumer) turns error diagnostics into error events;
//   StreamAction     (SyntaxOnlyAction)   installs the three above on the preprocessor;
//   RootedFS         (vfs::ProxyFileSystem) hides every file outside the allowed roots.

#include "alloc.h"
#include "foldingset.h"
#include "invocation.h"
#include "ring.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/AllDiagnostics.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/HeaderSearch.h"
#include "clang/Lex/HeaderSearchOptions.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

#ifndef HYDRA_CLANG_PATH
#define HYDRA_CLANG_PATH "/usr/lib/llvm-19/bin/clang"
#endif

using namespace clang;

namespace {

// ───────────────────────────── channel I/O ─────────────────────────────

// gChanFd is the current session channel (-1 in a dormant checkpoint). It is a plain global so
// that the crash handler can reach it.
volatile int gChanFd = -1;
// gLifeline is the read end of the owner's lifeline pipe; hang-up means the owner is gone.
int gLifeline = -1;

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

// plainWord reports whether S needs no JSON escaping (letters, digits, '_', '-'): the chunk
// categories the driver sends, which both ends then write and read by hand.
bool plainWord(llvm::StringRef S) {
  return llvm::all_of(S, [](char C) { return llvm::isAlnum(C) || C == '_' || C == '-'; });
}

// send writes one event line to the channel, with descriptors attached when Fds is not empty.
// If the engine is gone there is nobody to check for, so the process ends.
void sendObject(llvm::json::Object Obj, std::initializer_list<int> Fds = {}) {
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

// pidfdOpen returns a pidfd for Pid (-1 on failure). Passed to the driver, it lets the driver
// signal exactly this process, never a later one that reuses its pid.
int pidfdOpen(pid_t Pid) { return int(syscall(SYS_pidfd_open, Pid, 0)); }

// watchdogMain is the body of the watchdog thread of an active session: it ends the process as
// soon as the lifeline hangs up (the owner is gone) or the channel is hung up (the owner closed
// the session), even while the main thread is deep in a long parse and reads neither. It only
// calls poll() and _exit(), and holds no lock, so fork() from the main thread stays safe (the
// child has no watchdog; a resumed session starts its own).
void *watchdogMain(void *Arg) {
  int Chan = int(reinterpret_cast<intptr_t>(Arg));
  for (;;) {
    pollfd P[2] = {{gLifeline, POLLIN, 0}, {Chan, POLLRDHUP, 0}};
    int N = poll(P, 2, -1); // a negative fd (no lifeline) is skipped by poll
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return nullptr;
    }
    if (P[0].revents || (P[1].revents & (POLLRDHUP | POLLHUP | POLLERR)))
      _exit(0);
  }
}

void startWatchdog(int Chan) {
  // The thread blocks every signal, so that signals (a crash, a kill) are handled by the main
  // thread, whose crash handler reports them.
  sigset_t All, Old;
  sigfillset(&All);
  pthread_sigmask(SIG_SETMASK, &All, &Old);
  pthread_attr_t A;
  pthread_attr_init(&A);
  pthread_attr_setstacksize(&A, 64 * 1024);
  pthread_attr_setdetachstate(&A, PTHREAD_CREATE_DETACHED);
  pthread_t T;
  pthread_create(&T, &A, watchdogMain, reinterpret_cast<void *>(intptr_t(Chan)));
  pthread_attr_destroy(&A);
  pthread_sigmask(SIG_SETMASK, &Old, nullptr);
}

void send(std::initializer_list<llvm::json::Object::KV> KVs, std::initializer_list<int> Fds = {}) {
  sendObject(llvm::json::Object(KVs), Fds);
}

// sendProgress writes a progress event. With a plain category it prints the line by hand, on the
// stack, byte for byte as llvm::json would (keys sorted; the driver's decodeProgress reads exactly
// this): llvm::json's objects and its sorting allocate on every event, and after a checkpoint's
// fork each allocation that reuses a free heap chunk copies a page out of the checkpoint.
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

// crashHandler reports a fatal signal on the channel before dying by it, so that the engine
// sees "checker crashed: signal N" rather than a bare EOF. Only async-signal-safe calls.
void crashHandler(int Sig) {
  int Fd = gChanFd;
  if (Fd >= 0) {
    char Buf[96];
    const char *Pre = "{\"event\":\"crash\",\"diag\":\"checker crashed: signal ";
    size_t N = strlen(Pre);
    memcpy(Buf, Pre, N);
    char Num[8];
    int K = 0, S = Sig;
    do {
      Num[K++] = char('0' + S % 10);
      S /= 10;
    } while (S > 0 && K < 7);
    while (K > 0)
      Buf[N++] = Num[--K];
    memcpy(Buf + N, "\"}\n", 3);
    N += 3;
    if (gRing.mapped()) {
      gRing.write(Buf, N, Fd);
    } else {
      ssize_t Ignored = write(Fd, Buf, N);
      (void)Ignored;
    }
  }
  signal(Sig, SIG_DFL);
  raise(Sig);
}

void installCrashHandlers() {
  static char AltStack[64 * 1024];
  stack_t SS{};
  SS.ss_sp = AltStack;
  SS.ss_size = sizeof(AltStack);
  sigaltstack(&SS, nullptr);
  struct sigaction SA{};
  SA.sa_handler = crashHandler;
  SA.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (int Sig : {SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE})
    sigaction(Sig, &SA, nullptr);
}

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
  void reset(int Fd, int SpinUs = 0, bool UseRing = false) {
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
  int fd() const { return Fd; }

  // takeFd returns the oldest descriptor received and not yet taken, or -1.
  int takeFd() {
    if (Fds.empty())
      return -1;
    int F = Fds.front();
    Fds.erase(Fds.begin());
    return F;
  }
  void closeFds() {
    for (int F : Fds)
      close(F);
    Fds.clear();
  }

  // readLine reads up to the next '\n'. False on EOF, error or timeout (TimeoutMs >= 0).
  bool readLine(std::string &Line, int TimeoutMs = -1) {
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

  // readBytes reads exactly N bytes.
  bool readBytes(size_t N, std::string &Out) {
    while (Buf.size() - Pos < N)
      if (!fill(-1))
        return false;
    Out.assign(Buf, Pos, N);
    Pos += N;
    Scanned = Pos;
    compact();
    return true;
  }

private:
  void compact() {
    if (Pos > 0 && (Pos == Buf.size() || Pos > (1u << 20))) {
      Buf.erase(0, Pos);
      Scanned -= std::min(Scanned, Pos);
      Pos = 0;
    }
  }

  // recvSome receives what is there (Flags: MSG_DONTWAIT to not block), keeping descriptors.
  ssize_t recvSome(int Flags) {
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

  // spin tries non-blocking reads for up to SpinUs microseconds: 1 when data came, 0 at EOF or
  // on an error, -1 when nothing came (then block as usual). It backs off as the driver's
  // reader does (SpinGate in checkers/clang/fds.go): from the kSpinFailsToBackOff-th spin in a
  // row that runs out, each doubles the number of waits after it that block at once (up to
  // kMaxSpinSkip); a spin that gets the chunk halves it.
  int spin() {
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
  void spunAndGot() {
    SpinFails = 0;
    SpinBackoff /= 2;
  }
  void spunOut() {
    if (++SpinFails >= kSpinFailsToBackOff)
      SpinSkip = SpinBackoff = std::min(2 * SpinBackoff + 1, kMaxSpinSkip);
  }

  // spinRing watches the ring for up to SpinUs microseconds, with no system call: true when
  // bytes came (backing off as spin does).
  bool spinRing() {
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

  // fillRing is fill for a channel whose bytes come through gRing: read what is there, else
  // spin, else say we sleep and block on the socket (with the lifeline) for the wake-up byte.
  bool fillRing(int TimeoutMs) {
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

  bool fill(int TimeoutMs) {
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

Msg readMsg(Channel &C, int TimeoutMs = -1) {
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

// ───────────────────────────── diagnostics naming ─────────────────────────────

struct DiagName {
  unsigned ID;
  const char *Name;
};

// kDiagNames maps diagnostic ids to their enumerator names (err_undeclared_var_use, …), built from
// Clang's own .inc tables, so that categories follow Clang's naming rather than message text.
const DiagName kDiagNames[] = {
#define DIAG(ENUM, ...) {diag::ENUM, #ENUM},
#include "clang/Basic/DiagnosticASTKinds.inc"
#include "clang/Basic/DiagnosticCommonKinds.inc"
#include "clang/Basic/DiagnosticFrontendKinds.inc"
#include "clang/Basic/DiagnosticLexKinds.inc"
#include "clang/Basic/DiagnosticParseKinds.inc"
#include "clang/Basic/DiagnosticSemaKinds.inc"
#include "clang/Basic/DiagnosticAnalysisKinds.inc"
#undef DIAG
};

llvm::StringRef diagName(unsigned ID) {
  for (const DiagName &D : kDiagNames)
    if (D.ID == ID)
      return D.Name;
  return "";
}

bool startsWithAny(llvm::StringRef S, std::initializer_list<const char *> Prefixes) {
  for (const char *P : Prefixes)
    if (S.starts_with(P))
      return true;
  return false;
}

// categorize maps a diagnostic to the coarse classes of checkers/checker.go (Cat* constants).
const char *categorize(DiagnosticsEngine::Level L, unsigned ID, llvm::StringRef Name) {
  if (L == DiagnosticsEngine::Fatal || Name == "err_pp_file_not_found")
    return "fatal";
  if (startsWithAny(Name, {"err_undeclared_var_use", "err_undeclared_use", "err_unknown_typename",
                           "ext_implicit_function_decl", "err_implicit_function_decl",
                           "ext_implicit_lib_function_decl", "err_no_template",
                           "err_unknown_type_or_class_name", "err_undeclared_label_use",
                           "err_unknown_nested_typename_suggest", "err_undeclared_destructor"}))
    return "undeclared_identifier";
  if (startsWithAny(Name, {"err_no_member", "err_typecheck_member_reference_struct_union",
                           "err_no_suitable_member"}))
    return "no_member";
  if (startsWithAny(Name, {"err_typecheck_call_too_few_args", "err_typecheck_call_too_many_args",
                           "err_ovl_no_viable_function_in_call_arity"}))
    return "wrong_argument_count";
  if (startsWithAny(Name, {"err_redefinition", "err_conflicting_types", "err_duplicate_member",
                           "err_member_redeclared", "err_ovl_diff_return_type",
                           "err_conflicting_overriding_cc_attributes"}))
    return "redefinition";
  if (startsWithAny(Name, {"warn_falloff_nonvoid", "err_falloff_nonvoid", "ext_return_missing_expr",
                           "err_return_missing_expr", "warn_maybe_falloff_nonvoid",
                           "err_maybe_falloff_nonvoid"}))
    return "missing_return";
  if (startsWithAny(Name, {"err_typecheck_convert_", "ext_typecheck_convert_",
                           "warn_typecheck_convert_", "err_typecheck_nonviable_condition",
                           "err_ovl_no_viable_conversion", "err_init_conversion_failed",
                           "err_typecheck_invalid_operands", "err_ovl_no_viable_oper",
                           "err_ovl_no_viable_function_in_call",
                           "err_ovl_no_viable_member_function_in_call",
                           "err_ovl_no_viable_function_in_init", "err_ovl_no_conversion_in_cast",
                           "err_typecheck_cond_incompatible_operands", "err_bad_cxx_cast",
                           "err_reference_bind_failed", "err_lvalue_reference_bind_to",
                           "err_typecheck_converted_constant_expression",
                           "err_cannot_initialize", "err_typecheck_subscript_value",
                           "err_typecheck_indirection_requires_pointer",
                           "err_typecheck_call_not_function", "err_return_in_constructor",
                           "err_typecheck_incompatible"}))
    return "type_mismatch";
  if (Name.starts_with("err_expected"))
    return "syntax";
  unsigned Cat = DiagnosticIDs::getCategoryNumberForDiag(ID);
  llvm::StringRef CatName = DiagnosticIDs::getCategoryNameFromID(Cat);
  if (CatName == "Parse Issue")
    return "syntax";
  if (CatName == "Lexical or Preprocessor Issue" && !Name.starts_with("err_pp_") &&
      !Name.starts_with("pp_"))
    return "syntax";
  return "other";
}

// ───────────────────────────── the stream ─────────────────────────────

// minorFaults is the process's page faults so far (minor and major; getrusage).
long minorFaults() {
  rusage U{};
  getrusage(RUSAGE_SELF, &U);
  return U.ru_minflt + U.ru_majflt;
}

// kChunkMark ends the name of the chunks' virtual file (<checked file><mark>), and is in the
// name of each chunk's buffer (<checked file><mark><index>).
const char kChunkMark[] = ".hydra-chunk-";

// Chunk is one piece of checked text as Clang sees it: a FileID whose buffer is a `#line`
// directive (Prefix bytes, not part of the text) followed by the chunk's text.
struct Chunk {
  FileID FID;
  size_t Start = 0; // global offset of the chunk's first byte
  size_t Len = 0;   // bytes of text (without the #line prefix)
  unsigned Prefix = 0;
  std::string Cat;
  int64_t Chkpt = 0; // checkpoint requested at its end, or 0
  char Last = 0;     // last byte of the chunk's text ('\0' when empty)
  // KeepGoing: report progress and take the checkpoint even after an error (the engine
  // excuses errors that were in the document before; Clang recovers and checks on).
  bool KeepGoing = false;
  std::chrono::steady_clock::time_point Read; // when its message had been read
  // The process's page faults (minor + major) by then: those at the previous progress event
  // when nothing but waiting came between (one getrusage() a chunk instead of two).
  long Faults = 0;
};

// ── headroom in Clang's folding sets, before the first checkpoint ──
//
// Clang keeps its uniqued types (and names, nested-name-specifiers, special-member lookups) in
// llvm::FoldingSets: intrusive hash tables whose nodes hold the link to the next node of their
// bucket. When a set passes twice as many nodes as buckets, FoldingSetBase::GrowBucketCount
// rehashes it and so rewrites that link in every node, and the nodes lie all over the AST's
// memory. After a fork, each page written that way is copied: on a corpus program
// (cpp/graph/bidirectional_dijkstra.cpp) one line after the preamble took 2,447 page faults and
// left 10 MB private to the preamble's checkpoint (docs/checker-benchmark.md). So before a
// fresh session's first fork, while no checkpoint shares its pages, the sets that can grow the
// most get room for half as many nodes again: a rehash is then due only once the program has
// added half as many as the preamble made.
//
// ASTContext and DeclarationNameTable keep the sets private; an explicit instantiation may name
// a private member ([temp.explicit]: access checking does not apply to its template
// arguments), which is how PrivateMember reaches them without patching Clang. Each entry names
// the member and its exact type in Clang 19's headers; a rename fails the build, not the run.
template <typename Tag, typename Tag::Type Member> struct PrivateMember {
  friend typename Tag::Type memberOf(Tag) { return Member; }
};
#define HYDRA_PRIVATE_MEMBER(Class, Name, ...)                                                  \
  struct Name##Tag {                                                                            \
    using Type = __VA_ARGS__ Class::*;                                                          \
    friend Type memberOf(Name##Tag);                                                            \
  };                                                                                            \
  template struct PrivateMember<Name##Tag, &Class::Name>;

// HYDRA_AST_FOLDING_SETS lists ASTContext's sets that grow with C++ code, each with its node
// type: SET for a llvm::FoldingSet, CTX_SET for a llvm::ContextualFoldingSet<T, ASTContext &>.
#define HYDRA_AST_FOLDING_SETS(SET, CTX_SET)                                                    \
  SET(PointerTypes, PointerType)                                                                \
  SET(LValueReferenceTypes, LValueReferenceType)                                                \
  SET(RValueReferenceTypes, RValueReferenceType)                                                \
  SET(MemberPointerTypes, MemberPointerType)                                                    \
  CTX_SET(ConstantArrayTypes, ConstantArrayType)                                                \
  CTX_SET(DependentSizedArrayTypes, DependentSizedArrayType)                                    \
  CTX_SET(FunctionProtoTypes, FunctionProtoType)                                                \
  CTX_SET(DependentDecltypeTypes, DependentDecltypeType)                                        \
  SET(TemplateTypeParmTypes, TemplateTypeParmType)                                              \
  SET(SubstTemplateTypeParmTypes, SubstTemplateTypeParmType)                                    \
  SET(SubstTemplateTypeParmPackTypes, SubstTemplateTypeParmPackType)                            \
  CTX_SET(TemplateSpecializationTypes, TemplateSpecializationType)                              \
  SET(ParenTypes, ParenType)                                                                    \
  SET(UsingTypes, UsingType)                                                                    \
  SET(TypedefTypes, TypedefType)                                                                \
  SET(ElaboratedTypes, ElaboratedType)                                                          \
  SET(DependentNameTypes, DependentNameType)                                                    \
  CTX_SET(DependentTemplateSpecializationTypes, DependentTemplateSpecializationType)            \
  SET(PackExpansionTypes, PackExpansionType)                                                    \
  CTX_SET(AutoTypes, AutoType)                                                                  \
  SET(QualifiedTemplateNames, QualifiedTemplateName)                                            \
  SET(DependentTemplateNames, DependentTemplateName)                                            \
  SET(NestedNameSpecifiers, NestedNameSpecifier)
#define HYDRA_AST_SET(Name, T) HYDRA_PRIVATE_MEMBER(ASTContext, Name, llvm::FoldingSet<T>)
#define HYDRA_AST_CTX_SET(Name, T)                                                              \
  HYDRA_PRIVATE_MEMBER(ASTContext, Name, llvm::ContextualFoldingSet<T, ASTContext &>)
HYDRA_AST_FOLDING_SETS(HYDRA_AST_SET, HYDRA_AST_CTX_SET)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXConstructorNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXDestructorNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXConversionFunctionNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)

// roomToGrow makes a set take half as many nodes again before it rehashes: it rehashes it now,
// before any fork shares its nodes, if it has less room than that (twice as many buckets then;
// giving every set room to double instead cost more copied bucket pages than it saved, and a
// quarter left a later rehash on the program of the comment above). Small sets are left alone:
// their growth touches few pages.
template <typename Set> void roomToGrow(Set &S) {
  if (S.size() >= 64)
    S.reserve(S.size() + S.size() / 2);
}

// growFoldingSets gives the sets above (and Sema's special-member cache, a public member) room
// to grow by half.
void growFoldingSets(CompilerInstance &CI) {
  if (!CI.hasASTContext())
    return;
  ASTContext &Ctx = CI.getASTContext();
#define HYDRA_GROW(Name, T) roomToGrow(Ctx.*memberOf(Name##Tag{}));
  HYDRA_AST_FOLDING_SETS(HYDRA_GROW, HYDRA_GROW)
#undef HYDRA_GROW
  DeclarationNameTable &Names = Ctx.DeclarationNames;
  roomToGrow(Names.*memberOf(CXXConstructorNamesTag{}));
  roomToGrow(Names.*memberOf(CXXDestructorNamesTag{}));
  roomToGrow(Names.*memberOf(CXXConversionFunctionNamesTag{}));
  if (CI.hasSema())
    roomToGrow(CI.getSema().SpecialMemberCache);
}

// stackLow returns the lowest address of the main thread's stack mapping ([stack] in
// /proc/self/maps), or 0. It reads the file a line at a time into buffers on its own stack
// frame, not the heap: heap pages it wrote would be shared at the fork that follows. Never
// inlined: its 4.6 KB of buffers must not become part of dropDeadStack's frame (see there).
__attribute__((noinline)) uintptr_t stackLow() {
  int Fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return 0;
  char Buf[4096], Line[512];
  size_t Len = 0;
  uintptr_t Low = 0;
  for (ssize_t N; Low == 0 && (N = read(Fd, Buf, sizeof Buf)) > 0;) {
    for (ssize_t I = 0; I < N && Low == 0; I++) {
      if (Buf[I] != '\n') {
        if (Len + 1 < sizeof Line)
          Line[Len++] = Buf[I];
        continue;
      }
      Line[Len] = 0;
      if (Len > 7 && strcmp(Line + Len - 7, "[stack]") == 0)
        Low = strtoull(Line, nullptr, 16);
      Len = 0;
    }
  }
  close(Fd);
  return Low;
}

// gStackLow is the lowest address of the main thread's stack mapping as last seen (0: not
// read yet). A fork copies it, so resumed sessions start from their checkpoint's.
uintptr_t gStackLow = 0;

// currentStackLow returns the lowest address of the main thread's stack mapping, or 0. Reading
// /proc/self/maps costs 0.07-0.2 ms here (the kernel prints a line per mapping, a hundred and
// more with LLVM's libraries), so it is read once; after that, the stack can only have grown
// down, and each page it grew by is found with mincore(), which fails on the first unmapped
// page below it. No other mapping can lie right below the stack: the kernel keeps a guard gap
// of 256 pages there (stack_guard_gap), so the walk never leaves the stack.
__attribute__((noinline)) uintptr_t currentStackLow(uintptr_t Page) {
  if (gStackLow == 0) {
    gStackLow = stackLow();
    return gStackLow;
  }
  unsigned char Resident;
  while (gStackLow > Page && mincore(reinterpret_cast<void *>(gStackLow - Page), Page, &Resident) == 0)
    gStackLow -= Page;
  return gStackLow;
}

// dropDeadStack gives back to the kernel the pages of the main thread's stack below the
// caller's frame: left over from deeper calls (the parser's recursion), dead now. Mapped at a
// fork, each would be shared with the checkpoint and become the checkpoint's private copy when
// the session's next deep call writes it; dropped, that write finds a fresh zero page instead.
// Only the [stack] mapping is touched; nothing is dropped when it is not found.
// The end of what is dropped is one page below the page of this function's frame address, and
// nothing live may lie below it while madvise runs: its own return address must be above it.
// That holds because this frame is a few words: its helpers are never inlined. (Until they
// were marked so, stackLow was inlined here with its buffers, the stack pointer lay 4.6 KB
// below the frame address, and only the compiler's tail call of madvise kept its return
// address out of the dropped pages; without the tail call, a frame address less than 560 bytes
// into its page made madvise return to address 0.)
__attribute__((noinline)) void dropDeadStack() {
  uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t Low = currentStackLow(Page);
  // One page of margin below this frame: what the calls from here (madvise, fork) use.
  uintptr_t Here = uintptr_t(__builtin_frame_address(0)) & ~(Page - 1);
  if (Low == 0 || Here < Low + 2 * Page)
    return;
  madvise(reinterpret_cast<void *>(Low), Here - Page - Low, MADV_DONTNEED);
}

// Place is where an error lands in the checked text.
struct Place {
  size_t Off = 0;
  unsigned Line = 1, Col = 1;
};

// Stream is the per-process state shared by the Clang extension points: the chunks entered so
// far, the channel, and the pending error (held until its notes have been seen).
class Stream {
public:
  std::string Filename;
  bool TrimBeforeFork = true;
  bool GrowSets = true; // growFoldingSets before the first fork; HYDRA_SHIM_NO_GROW_SETS=1: off
  bool DropStack = true; // dropDeadStack before each fork; HYDRA_SHIM_KEEP_STACK=1: off
  // One virtual file for each chunk, as before ChunkFile (enterChunk); HYDRA_SHIM_FILE_PER_CHUNK=1.
  bool FilePerChunk = false;
  bool Forked = false;  // a fork has happened in this process's history (resumed sessions too)
  int SpinUs = 0; // see Channel::reset
  int64_t Session = 0;
  Channel Chan;
  bool FatalStop = false;

  void attach(CompilerInstance &CI) {
    this->CI = &CI;
    PP = &CI.getPreprocessor();
    SM = &CI.getSourceManager();
  }

  // pullNext blocks for the next message and enters the next chunk; false at end of input.
  bool pullNext() {
    for (;;) {
      Msg M = readMsg(Chan);
      Chan.closeFds(); // the driver sends descriptors only to checkpoints
      switch (M.K) {
      case Msg::Submit:
        enterChunk(std::move(M));
        return true;
      case Msg::Eos:
        return false;
      case Msg::Gone:
        _exit(0); // the engine closed the session
      case Msg::Resume:
      case Msg::Free:
      case Msg::Bad:
        send({{"event", "crash"},
              {"diag", M.K == Msg::Bad ? M.Err : "protocol error: checkpoint op on a session"}});
        _exit(2);
      }
    }
  }

  // chunkEnded runs when the lexer leaves chunk FID (ChunkFeeder::FileChanged). It reports
  // progress, takes a requested checkpoint, then blocks for the next chunk.
  void chunkEnded(FileID FID) {
    auto It = ByFID.find(FID);
    if (It == ByFID.end() || It->second + 1 != Chunks.size())
      return; // a header, or not the newest chunk
    flushPending();
    if (CI->getDiagnostics().hasFatalErrorOccurred()) {
      // Clang suppresses every diagnostic after a fatal one: nothing more can be checked.
      finish();
    }
    const Chunk &C = Chunks.back();
    FaultsAtEvent = -1;
    if (Errors == 0 || C.KeepGoing) {
      // shim_us: the shim's own time on the chunk (Clang's lexing, parsing and analysis, and the
      // callbacks), from having read it off the channel to this event (hydra bench checker's
      // breakdown_ms.shim).
      auto Us = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - C.Read)
                    .count();
      // shim_faults: page faults over about the same span: from the previous progress event
      // (from the read, after a checkpoint or an error), so the wait for this chunk is in it
      // too. After a checkpoint's fork they are mostly copy-on-write copies of pages the
      // session writes (breakdown_ms.shim_faults_mean).
      long Faults = minorFaults();
      sendProgress(int64_t(C.Start + C.Len), C.Cat, int64_t(Us), int64_t(Faults - C.Faults));
      if (C.Chkpt > 0)
        checkpoint(C.Chkpt, C.Start + C.Len);
      else
        FaultsAtEvent = Faults;
    }
    pullNext();
  }

  // finish ends the session: flush, report the verdict, exit without tearing Clang down.
  [[noreturn]] void finish() {
    flushPending();
    bool OK = CI && !CI->getDiagnostics().hasErrorOccurred() && Errors == 0;
    send({{"event", "done"}, {"ok", OK}});
    _exit(0);
  }

  // ── diagnostics ──

  void onDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) {
    if (L == DiagnosticsEngine::Note) {
      onNote(Info);
      return;
    }
    flushPending();
    if (L < DiagnosticsEngine::Error)
      return; // warnings and remarks are not errors (-Werror turns them into errors upstream)
    Pending P;
    P.Active = true;
    P.ID = Info.getID();
    P.Name = diagName(P.ID).str();
    P.Cat = categorize(L, P.ID, P.Name);
    llvm::SmallString<256> Text;
    Info.FormatDiagnostic(Text);
    P.Diag = Text.str().str();
    P.Option = DiagnosticIDs::getWarningOptionForDiag(P.ID).str();
    locate(Info, P);
    Pend = std::move(P);
  }

  void flushPending() {
    if (!Pend.Active)
      return;
    Pend.Active = false;
    llvm::json::Object Meta{{"diag_id", Pend.Name}};
    if (!Pend.Option.empty())
      Meta["option"] = "-W" + Pend.Option;
    if (!Pend.HeaderFile.empty()) {
      Meta["file"] = Pend.HeaderFile;
      Meta["file_line"] = int64_t(Pend.HeaderLine);
      Meta["file_col"] = int64_t(Pend.HeaderCol);
    }
    ++Errors;
    if (Pend.NotesSeen > Pend.Notes.size())
      Meta["notes_left_out"] = int64_t(Pend.NotesSeen - Pend.Notes.size());
    llvm::json::Object Ev{{"event", "error"},
                          {"off", int64_t(Pend.At.Off)},
                          {"line", int64_t(Pend.At.Line)},
                          {"col", int64_t(Pend.At.Col)},
                          {"cat", Pend.Cat},
                          {"diag", Pend.Diag},
                          {"meta", std::move(Meta)}};
    if (!Pend.Notes.empty())
      Ev["notes"] = std::move(Pend.Notes);
    sendObject(std::move(Ev));
  }

private:
  struct Pending {
    bool Active = false;
    bool InHeader = false; // located at end of input for now; a user-code note may refine it
    unsigned ID = 0;
    std::string Name, Cat, Diag, Option, HeaderFile;
    unsigned HeaderLine = 0, HeaderCol = 0;
    Place At;
    llvm::json::Array Notes; // the error's notes as the error event carries them
    size_t NotesBytes = 0, NotesSeen = 0;
  };

  // Budget of the notes an error event carries: the candidates and the instantiation stack a
  // reader (or a model repairing the code) needs, not a page of them. Notes past it are counted.
  static constexpr size_t MaxNotes = 8, MaxNotesBytes = 4096, MaxNoteBytes = 512;

  // keepNote adds a note to the pending error, with its place: an offset, line and column in the
  // checked text, or the file, line and column of a header.
  void keepNote(const Diagnostic &Info) {
    ++Pend.NotesSeen;
    if (Pend.Notes.size() >= MaxNotes || Pend.NotesBytes >= MaxNotesBytes)
      return;
    llvm::SmallString<256> Text;
    Info.FormatDiagnostic(Text);
    std::string Msg = Text.str().str();
    if (Msg.size() > MaxNoteBytes)
      Msg = Msg.substr(0, MaxNoteBytes) + "…";
    llvm::json::Object N{{"diag", Msg}};
    Place P;
    if (Info.hasSourceManager() && Info.getLocation().isValid()) {
      if (userPlace(Info.getLocation(), P)) {
        N["off"] = int64_t(P.Off);
        N["line"] = int64_t(P.Line);
        N["col"] = int64_t(P.Col);
      } else {
        PresumedLoc PL = SM->getPresumedLoc(SM->getFileLoc(Info.getLocation()));
        if (PL.isValid()) {
          N["file"] = std::string(PL.getFilename());
          N["line"] = int64_t(PL.getLine());
          N["col"] = int64_t(PL.getColumn());
        }
      }
    }
    Pend.NotesBytes += Msg.size();
    Pend.Notes.push_back(std::move(N));
  }

  void onNote(const Diagnostic &Info) {
    if (!Pend.Active)
      return;
    keepNote(Info);
    llvm::StringRef N = diagName(Info.getID());
    if (Pend.Name.rfind("err_ovl_no_viable", 0) == 0 && N.starts_with("note_ovl_candidate_arity"))
      Pend.Cat = "wrong_argument_count";
    if (Pend.InHeader && Info.hasSourceManager()) {
      // "in instantiation of … requested here": the first note in user code names the cause.
      Place P;
      if (userPlace(Info.getLocation(), P)) {
        Pend.At = P;
        Pend.InHeader = false;
      }
    }
  }

  void locate(const Diagnostic &Info, Pending &P) {
    P.At = endOfInput();
    if (!Info.hasSourceManager() || Info.getLocation().isInvalid())
      return;
    if (userPlace(Info.getLocation(), P.At))
      return;
    // An error inside a header (or other non-user buffer).
    SourceLocation FL = SM->getFileLoc(Info.getLocation());
    PresumedLoc PL = SM->getPresumedLoc(FL);
    if (PL.isValid()) {
      P.HeaderFile = PL.getFilename();
      P.HeaderLine = PL.getLine();
      P.HeaderCol = PL.getColumn();
    }
    P.InHeader = true;
    P.At = endOfInput();
  }

  // userPlace maps Loc to a place in the checked text if it lies in a chunk (or in the main
  // buffer, which stands for end of input).
  bool userPlace(SourceLocation Loc, Place &Out) {
    if (Loc.isInvalid())
      return false;
    for (SourceLocation L : {SM->getFileLoc(Loc), SM->getExpansionLoc(Loc)}) {
      FileID FID = SM->getFileID(L);
      if (FID == SM->getMainFileID()) {
        Out = endOfInput();
        return true;
      }
      auto It = ByFID.find(FID);
      if (It == ByFID.end())
        continue;
      const Chunk &C = Chunks[It->second];
      unsigned FO = SM->getFileOffset(L);
      size_t Rel = FO > C.Prefix ? FO - C.Prefix : 0;
      Rel = std::min(Rel, C.Len);
      Out.Off = C.Start + Rel;
      PresumedLoc PL = SM->getPresumedLoc(L);
      if (PL.isValid()) {
        Out.Line = PL.getLine();
        Out.Col = PL.getColumn();
      }
      return true;
    }
    return false;
  }

  // endOfInput is where Clang puts end-of-file: the final newline if the text ends with one.
  Place endOfInput() {
    Place P;
    if (Chunks.empty() || Total == 0)
      return P;
    size_t Off = Total;
    // Find the last non-empty chunk.
    size_t I = Chunks.size();
    while (I > 0 && Chunks[I - 1].Len == 0)
      --I;
    if (I == 0)
      return P;
    const Chunk &C = Chunks[I - 1];
    if (C.Last == '\n')
      Off = Total - 1;
    P.Off = Off;
    SourceLocation L = SM->getLocForStartOfFile(C.FID).getLocWithOffset(
        int(C.Prefix + (Off - C.Start)));
    PresumedLoc PL = SM->getPresumedLoc(L);
    if (PL.isValid()) {
      P.Line = PL.getLine();
      P.Col = PL.getColumn();
    }
    return P;
  }

  // ── chunks ──

  static void appendEscaped(std::string &Out, llvm::StringRef S) {
    for (char Ch : S) {
      if (Ch == '\\' || Ch == '"')
        Out.push_back('\\');
      Out.push_back(Ch);
    }
  }

  // blankPragmas replaces `#pragma once` and `#pragma GCC|clang system_header` with spaces of
  // the same length: in a chunk (not a real file) they crash HeaderSearch; in the whole file
  // they would only warn.
  static void blankPragmas(std::string &S) {
    auto SkipWS = [&](size_t I) {
      while (I < S.size() && (S[I] == ' ' || S[I] == '\t'))
        ++I;
      return I;
    };
    auto Word = [&](size_t I, const char *W) {
      size_t N = strlen(W);
      if (S.compare(I, N, W) != 0)
        return size_t(0);
      size_t E = I + N;
      if (E < S.size() && (isalnum((unsigned char)S[E]) || S[E] == '_'))
        return size_t(0);
      return E;
    };
    for (size_t LS = 0; LS < S.size();) {
      size_t LE = S.find('\n', LS);
      if (LE == std::string::npos)
        LE = S.size();
      size_t I = SkipWS(LS);
      if (I < LE && S[I] == '#') {
        size_t E = Word(SkipWS(I + 1), "pragma");
        if (E > 0) {
          size_t J = SkipWS(E);
          size_t End = Word(J, "once");
          if (End == 0) {
            size_t G = Word(J, "GCC");
            if (G == 0)
              G = Word(J, "clang");
            if (G > 0)
              End = Word(SkipWS(G), "system_header");
          }
          if (End > 0 && End <= LE)
            for (size_t K = LS; K < End; ++K)
              S[K] = ' ';
        }
      }
      LS = LE + 1;
    }
  }

  void enterChunk(Msg M) {
    // `#line N "file"` from the presumed location where the previous chunk ended keeps
    // __LINE__, user #line directives and reported lines as in the whole file.
    unsigned Line = 1;
    std::string File = Filename;
    if (!Chunks.empty()) {
      PresumedLoc PL = SM->getPresumedLoc(SM->getLocForEndOfFile(Chunks.back().FID));
      if (PL.isValid()) {
        Line = PL.getLine();
        File = PL.getFilename();
      }
    }
    std::string Buf = "#line " + std::to_string(Line) + " \"";
    appendEscaped(Buf, File);
    Buf += "\"\n";
    Chunk C;
    C.Prefix = unsigned(Buf.size());
    C.Start = Total;
    C.Len = M.Text.size();
    C.Cat = std::move(M.Cat);
    C.Chkpt = M.Chkpt;
    C.KeepGoing = M.KeepGoing;
    C.Read = std::chrono::steady_clock::now();
    C.Faults = FaultsAtEvent >= 0 ? FaultsAtEvent : minorFaults();
    C.Last = M.Text.empty() ? '\0' : M.Text.back();
    blankPragmas(M.Text);
    // A UTF-8 byte-order mark is skipped by Clang's lexer only at the very start of a file, and
    // counts in the columns of line 1. Only the document's first bytes are that start; they are
    // not at the start of the chunk's buffer (the #line prefix is), so they become three spaces:
    // same offsets, same columns, nothing to lex. Anywhere else a BOM stays an error, as in the
    // whole file.
    if (Total == 0 && llvm::StringRef(M.Text).starts_with("\xEF\xBB\xBF"))
      M.Text.replace(0, 3, "   ");
    Buf += M.Text;
    SourceLocation Inc = SM->getLocForStartOfFile(SM->getMainFileID());
    // Each chunk is a FileID of its own over its own buffer, and all of them stand for one
    // virtual file next to the checked file (a FileEntry, ChunkFile): parts of Clang assume the
    // current lexer has a file (#embed and __has_embed dereference its FileEntry and crash on a
    // bare buffer; quoted #include / #embed look next to it). The name never appears in
    // diagnostics, which use the #line name; RootedFS answers for it without touching the disk.
    // One entry for all chunks, not one each: a virtual file per chunk cost FileManager's maps,
    // SourceManager's content cache map and HeaderSearch's file info an entry per chunk, pages
    // that every chunk wrote again after each checkpoint's fork (docs/checker-benchmark.md,
    // "One file entry for every chunk"). The entry's own contents are never read: each FileID's
    // content cache holds its chunk's buffer, and only names the entry as its file.
    if (ChunkBase.empty()) {
      // An absolute name: FileManager makes every file's real path absolute, and for a relative
      // name it asks for the working directory each time (two stat() calls a chunk).
      llvm::SmallString<256> Abs(Filename);
      llvm::sys::fs::make_absolute(Abs);
      ChunkBase = std::string(Abs) + kChunkMark;
    }
    std::string VName = ChunkBase + std::to_string(Chunks.size());
    if (FilePerChunk) { // the lever's "off" row: a virtual file of the chunk's own
      FileEntryRef FE = CI->getFileManager().getVirtualFileRef(VName, off_t(Buf.size()), 0);
      SM->overrideFileContents(FE, llvm::MemoryBuffer::getMemBufferCopy(Buf, VName));
      PP->getHeaderSearchInfo().getFileInfo(FE); // see below
      C.FID = SM->createFileID(FE, Inc, SrcMgr::C_User);
    } else {
      if (!ChunkFile) {
        ChunkFile = CI->getFileManager().getVirtualFileRef(ChunkBase, 0, 0);
        // HeaderSearch expects every file that can include another to have header info (an
        // #include "x" from a file without it crashes in HeaderSearch::LookupFile): make it, as
        // entering the main file or an #include does.
        PP->getHeaderSearchInfo().getFileInfo(*ChunkFile);
      }
      C.FID = SM->createFileID(llvm::MemoryBuffer::getMemBufferCopy(Buf, VName), SrcMgr::C_User,
                               0, 0, Inc);
      // A memory buffer's content cache names no file; this one names ChunkFile. OrigEntry is a
      // public member of SrcMgr::ContentCache, reached here through SourceManager's const view.
      const_cast<SrcMgr::ContentCache &>(SM->getSLocEntry(C.FID).getFile().getContentCache())
          .OrigEntry = *ChunkFile;
    }
    Total += C.Len;
    ByFID[C.FID] = Chunks.size();
    Chunks.push_back(std::move(C));
    PP->EnterSourceFile(Chunks.back().FID, nullptr, Inc);
  }

  // ── checkpoints ──

  // checkpoint forks a dormant copy of this process for the prefix up to Off. Its control
  // channel is a socket pair made before the fork: the child keeps one end, the other goes to
  // the driver with the chkpt event (SCM_RIGHTS), together with a pidfd of the child. The pair
  // has no name, so only the driver (who holds the other end) can ever talk to the checkpoint.
  void checkpoint(int64_t ID, size_t Off) {
    // Before the first fork in this process's history (never in a resumed session, a fork of
    // its checkpoint), give Clang's folding sets room to grow (growFoldingSets).
    if (!Forked && GrowSets)
      growFoldingSets(*CI);
    Forked = true;
    auto Prep = std::chrono::steady_clock::now();
    // Then give free heap pages back to the kernel: every page still mapped at the fork is
    // shared with the session, and becomes the checkpoint's own private copy as soon as the
    // session writes to it (malloc reuses freed chunks first). Measured in
    // docs/checker-benchmark.md; HYDRA_SHIM_NO_TRIM=1 turns it off for that comparison.
    if (TrimBeforeFork)
      malloc_trim(0);
    if (DropStack)
      dropDeadStack();
    // From here on, new objects go to fresh pages, not to free chunks the checkpoint shares
    // (alloc.cpp).
    hydraNewAllocGeneration();
    hydraFoldingSetsNewGeneration(); // and new heads of Clang's folding sets (foldingset.cpp)
    int Ctl[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Ctl) < 0) {
      llvm::errs() << "hydra-clang-shim: checkpoint " << ID << ": " << strerror(errno) << "\n";
      return;
    }
    auto T0 = std::chrono::steady_clock::now();
    pid_t Pid = fork();
    auto T1 = std::chrono::steady_clock::now();
    if (Pid < 0) {
      close(Ctl[0]);
      close(Ctl[1]);
      return;
    }
    if (Pid == 0) {
      close(Ctl[0]);
      dormant(Ctl[1], ID); // returns only in a resumed session
      return;
    }
    close(Ctl[1]);
    // SIGCHLD is ignored, so a child that died at once would be reaped and its pid free again:
    // the pidfd is opened while the child still holds its end of the pair and cannot have exited
    // on its own (it exits only when that end hangs up or the lifeline does).
    int PidFd = pidfdOpen(Pid);
    auto Us = std::chrono::duration_cast<std::chrono::microseconds>(T1 - T0).count();
    // prep_us: the work before the fork (malloc_trim, the dead stack, the new malloc
    // generation), which the checkpoint costs beyond fork() itself.
    auto PrepUs = std::chrono::duration_cast<std::chrono::microseconds>(T0 - Prep).count();
    if (PidFd >= 0)
      send({{"event", "chkpt"},
            {"off", int64_t(Off)},
            {"id", ID},
            {"parent", Session},
            {"pid", int64_t(Pid)},
            {"meta", llvm::json::Object{{"fork_us", int64_t(Us)}, {"prep_us", int64_t(PrepUs)}}}},
           {Ctl[0], PidFd});
    close(Ctl[0]); // the driver has its own copy now; without a pidfd, the child sees EOF and exits
    if (PidFd >= 0)
      close(PidFd);
  }

  // dormant is the checkpoint's life: wait on the control socket for resume or free. A resume
  // brings the new session's channel (SCM_RIGHTS) and forks a grandchild that returns from here
  // into the parser with that channel. Free, or the driver closing the control socket, ends it.
  void dormant(int Ctl, int64_t ID) {
    close(Chan.fd());
    gChanFd = -1;
    gRing.unmap(); // the session's, which goes on without us
    Chan.reset(Ctl);
    for (;;) {
      Msg M = readMsg(Chan); // exits on lifeline hang-up
      if (M.K == Msg::Gone || M.K == Msg::Free)
        _exit(0);
      int Fd = Chan.takeFd();
      int RingFd = Chan.takeFd(); // -1: the new session's channel is a plain socket
      Chan.closeFds();
      if (M.K != Msg::Resume || Fd < 0) {
        if (Fd >= 0)
          close(Fd);
        if (RingFd >= 0)
          close(RingFd);
        continue; // the driver never sends anything else; ignore it
      }
      pid_t Dormant = getpid();
      pid_t Pid = fork();
      if (Pid == 0) {
        hydraNewAllocGeneration(); // leave the checkpoint's free chunks to it, as at a fork
        hydraFoldingSetsNewGeneration();
        // The resumed session dies with the checkpoint (which dies with the driver).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != Dormant)
          _exit(0);
        close(Ctl);
        if (RingFd >= 0 && !gRing.map(RingFd))
          _exit(1); // the driver sees the channel hang up
        if (RingFd >= 0)
          close(RingFd);
        Chan.reset(Fd, SpinUs, gRing.mapped());
        gChanFd = Fd;
        Session = M.ID;
        startWatchdog(Fd);
        int Self = pidfdOpen(getpid());
        send({{"event", "init"},
              {"id", Session},
              {"parent", ID},
              {"pid", int64_t(getpid())},
              {"off", int64_t(Total)}},
             {Self});
        close(Self);
        return; // back into the parser, which goes on reading chunks from Fd
      }
      close(Fd);
      if (RingFd >= 0)
        close(RingFd);
    }
  }

  CompilerInstance *CI = nullptr;
  Preprocessor *PP = nullptr;
  SourceManager *SM = nullptr;
  std::vector<Chunk> Chunks;
  llvm::DenseMap<FileID, size_t> ByFID;
  std::string ChunkBase; // the checked file's absolute path and kChunkMark (enterChunk)
  OptionalFileEntryRef ChunkFile; // the one file entry every chunk names (enterChunk)
  long FaultsAtEvent = -1; // page faults when the last progress event was sent; -1: read anew
  size_t Total = 0; // bytes of text entered so far
  unsigned Errors = 0;
  Pending Pend;
};

Stream TheStream;

// ───────────────────────────── Clang extension points ─────────────────────────────

// NextChunkPragma handles `#pragma hydra_next`, the only line of the main buffer. Relies on:
// a pragma handler runs while the main lexer is in directive mode; once it has read up to the
// end of the directive (eod), entering a new file makes the preprocessor continue lexing from
// that file, and the main file resumes after the pragma when it ends (as for #include).
class NextChunkPragma : public PragmaHandler {
public:
  NextChunkPragma() : PragmaHandler("hydra_next") {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &Tok) override {
    while (Tok.isNot(tok::eod) && Tok.isNot(tok::eof))
      PP.LexUnexpandedToken(Tok);
    // Only the main buffer's pragma starts the stream; the same pragma in checked text is
    // ignored, as an unknown pragma would be.
    if (Started)
      return;
    Started = true;
    TheStream.pullNext(); // false (nothing entered) for empty input: eos before any text
  }

private:
  bool Started = false;
};

// ChunkFeeder pulls the next chunk. Relies on: Preprocessor::HandleEndOfFile pops the chunk's
// lexer and then calls FileChanged(ExitFile, PrevFID = the chunk); a file entered from that
// callback becomes the current lexer, so lexing continues seamlessly in it (include depth stays
// at 1: chunks never nest). Exits from real headers (PrevFID not a chunk) are ignored.
class ChunkFeeder : public PPCallbacks {
public:
  void FileChanged(SourceLocation, FileChangeReason Reason, SrcMgr::CharacteristicKind,
                   FileID PrevFID) override {
    if (Reason == ExitFile)
      TheStream.chunkEnded(PrevFID);
  }
};

// ErrorReporter receives every diagnostic. Relies on: notes follow the diagnostic they belong
// to immediately, so an error is held back until the next non-note (or a chunk end) and its
// notes can place an error from inside a header at the user code that caused it.
class ErrorReporter : public DiagnosticConsumer {
public:
  void HandleDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) override {
    DiagnosticConsumer::HandleDiagnostic(L, Info);
    TheStream.onDiagnostic(L, Info);
  }
};

// StreamAction is a plain -fsyntax-only action with the extension points installed on its
// preprocessor before the main file is entered.
class StreamAction : public SyntaxOnlyAction {
protected:
  bool BeginSourceFileAction(CompilerInstance &CI) override {
    Preprocessor &PP = CI.getPreprocessor();
    PP.AddPragmaHandler(new NextChunkPragma()); // the preprocessor owns it
    PP.addPPCallbacks(std::make_unique<ChunkFeeder>());
    TheStream.attach(CI);
    return SyntaxOnlyAction::BeginSourceFileAction(CI);
  }
};

// ───────────────────────────── file access ─────────────────────────────

// RootedFS is the real file system cut down to a set of allowed roots. Checked text is written by
// a model, so `#include "/etc/passwd"`, `#include "../../x"` or a symlink out of the project must
// not make Clang read (and quote in diagnostics) files that are none of its business. A path whose
// real path (symlinks resolved, dots removed) is under no root does not exist as far as Clang can
// tell: the include ends in Clang's own fatal "'x' file not found", __has_include is false.
// Everything else is the real file system, unchanged (names included, so diagnostics read as in a
// whole-file run). The main file is a remapped buffer: if its path does not exist, Clang never
// asks for it.
class RootedFS : public llvm::vfs::ProxyFileSystem {
public:
  explicit RootedFS(llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> FS)
      : ProxyFileSystem(std::move(FS)) {}

  // allow adds a root: a directory and all below it. A path that does not exist (yet) allows
  // nothing.
  void allow(const std::string &Path) {
    std::string Real;
    if (realPath(Path, Real))
      Roots.push_back(std::move(Real));
  }

  // allowFile adds a single file as a root. Its directory may then be stat'ed (FileManager looks
  // up a file's directory first) but nothing else in it is visible.
  void allowFile(const std::string &Path) {
    std::string Real;
    if (!realPath(Path, Real))
      return;
    FileDirs.push_back(llvm::sys::path::parent_path(Real).str());
    Roots.push_back(std::move(Real));
  }

  llvm::ErrorOr<llvm::vfs::Status> status(const llvm::Twine &Path) override {
    // FileManager stats a chunk's virtual file once when it is made. It never exists on disk,
    // but it is said to (a fresh unique id, no disk access), so that FileManager gives its entry
    // a real path name next to the checked file: #embed "x" looks for x next to the real path
    // of the file it is in, as it does for the whole file.
    std::string P = Path.str();
    if (llvm::StringRef(P).contains(kChunkMark))
      return llvm::vfs::Status(P, llvm::vfs::getNextVirtualUniqueID(), {}, 0, 0, 0,
                               llvm::sys::fs::file_type::regular_file, llvm::sys::fs::all_read);
    if (!allowed(Path) && !isFileDir(Path))
      return notFound();
    return ProxyFileSystem::status(Path);
  }
  bool exists(const llvm::Twine &Path) override {
    return allowed(Path) && ProxyFileSystem::exists(Path);
  }
  llvm::ErrorOr<std::unique_ptr<llvm::vfs::File>>
  openFileForRead(const llvm::Twine &Path) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::openFileForRead(Path);
  }
  llvm::vfs::directory_iterator dir_begin(const llvm::Twine &Dir, std::error_code &EC) override {
    if (!allowed(Dir)) {
      EC = notFound();
      return {};
    }
    return ProxyFileSystem::dir_begin(Dir, EC);
  }
  std::error_code getRealPath(const llvm::Twine &Path,
                              llvm::SmallVectorImpl<char> &Output) override {
    if (!allowed(Path))
      return notFound();
    return ProxyFileSystem::getRealPath(Path, Output);
  }

private:
  static std::error_code notFound() {
    return std::make_error_code(std::errc::no_such_file_or_directory);
  }

  // realPath is realpath(3): relative paths are taken from the process's working directory, which
  // is the real file system's too. (Not vfs getRealPath: that opens the file to ask /proc, and an
  // open() of a FIFO outside the roots could block.)
  static bool realPath(const std::string &Path, std::string &Out) {
    if (Path.empty())
      return false;
    char *R = ::realpath(Path.c_str(), nullptr);
    if (!R)
      return false;
    Out = R;
    free(R);
    return true;
  }

  // allowed resolves Path and looks for a root that is it or one of its ancestors. A path that
  // cannot be resolved does not exist, or is in a directory we may not search: refused either
  // way. (Checked text cannot create files, so a path cannot change between this check and the
  // open that follows.)
  bool allowed(const llvm::Twine &Path) {
    std::string Real;
    if (!realPath(Path.str(), Real))
      return false;
    llvm::StringRef R = Real;
    for (const std::string &Root : Roots)
      if (R.starts_with(Root) &&
          (R.size() == Root.size() || Root.back() == '/' || R[Root.size()] == '/'))
        return true;
    return false;
  }

  bool isFileDir(const llvm::Twine &Path) {
    std::string Real;
    return !FileDirs.empty() && realPath(Path.str(), Real) &&
           llvm::is_contained(FileDirs, Real);
  }

  std::vector<std::string> Roots;
  std::vector<std::string> FileDirs; // directories of single-file roots
};

// guardFileSystem makes the file system Clang reads through for the invocation: the checked
// file's directory and the project root, the system include directories the driver chose (so
// another toolchain layout keeps working), the LLVM installation, and what the user's flags name
// (-I/-isystem/-iquote/-idirafter… directories, -include/-imacros files, a --sysroot).
llvm::IntrusiveRefCntPtr<RootedFS> guardFileSystem(const CompilerInvocation &Inv,
                                                   llvm::StringRef FileDir, llvm::StringRef Root,
                                                   llvm::StringRef ClangPath) {
  auto FS = llvm::makeIntrusiveRefCnt<RootedFS>(llvm::vfs::getRealFileSystem());
  FS->allow(FileDir.str());
  FS->allow(Root.str());
  FS->allow(llvm::sys::path::parent_path(llvm::sys::path::parent_path(ClangPath)).str()); // …/llvm-19
  const HeaderSearchOptions &HS = Inv.getHeaderSearchOpts();
  for (const HeaderSearchOptions::Entry &E : HS.UserEntries) // user's and driver's, all groups
    FS->allow(E.Path);
  FS->allow(HS.ResourceDir);
  if (HS.Sysroot != "/") // the default sysroot "/" is no restriction to grant
    FS->allow(HS.Sysroot);
  for (const std::string &F : HS.VFSOverlayFiles)
    FS->allowFile(F);
  const PreprocessorOptions &PO = Inv.getPreprocessorOpts();
  for (const std::string &F : PO.Includes)
    FS->allowFile(F);
  for (const std::string &F : PO.MacroIncludes)
    FS->allowFile(F);
  FS->allowFile(PO.ImplicitPCHInclude);
  return FS;
}

// ───────────────────────────── main ─────────────────────────────

[[noreturn]] void usage(const char *Why) {
  llvm::errs() << "hydra-clang-shim: " << Why
               << "\nusage: hydra-clang-shim --channel-fd N [--lifeline-fd N] [--ring-fd N] "
                  "--session ID --file F [--root DIR] [--clang PATH] -- CLANG_FLAGS...\n";
  _exit(2);
}

} // namespace

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  signal(SIGCHLD, SIG_IGN); // checkpoints and resumed sessions are reaped automatically
  std::string ClangPath = HYDRA_CLANG_PATH;
  std::string Root; // the project root, where files besides the checked file's own directory live
  std::vector<std::string> Flags;
  int RingFd = -1; // the channel's shared-memory ring (ring.h), if the driver passed one
  int I = 1;
  for (; I < argc; ++I) {
    llvm::StringRef A = argv[I];
    if (A == "--") {
      ++I;
      break;
    }
    if (I + 1 >= argc)
      usage("missing value");
    const char *V = argv[++I];
    if (A == "--channel-fd")
      gChanFd = atoi(V);
    else if (A == "--lifeline-fd")
      gLifeline = atoi(V);
    else if (A == "--ring-fd")
      RingFd = atoi(V);
    else if (A == "--socket-prefix")
      ; // accepted for compatibility: checkpoints have no sockets of their own any more
    else if (A == "--session")
      TheStream.Session = atoll(V);
    else if (A == "--file")
      TheStream.Filename = V;
    else if (A == "--root")
      Root = V;
    else if (A == "--clang")
      ClangPath = V;
    else
      usage(("unknown option " + A.str()).c_str());
  }
  for (; I < argc; ++I)
    Flags.push_back(argv[I]);
  if (gChanFd < 0 || TheStream.Filename.empty())
    usage("--channel-fd and --file are required");
  TheStream.TrimBeforeFork = !getenv("HYDRA_SHIM_NO_TRIM");
  TheStream.GrowSets = !getenv("HYDRA_SHIM_NO_GROW_SETS");
  TheStream.DropStack = !getenv("HYDRA_SHIM_KEEP_STACK");
  TheStream.FilePerChunk = getenv("HYDRA_SHIM_FILE_PER_CHUNK") != nullptr;
  // HYDRA_SHIM_SPIN_US: how long an active session spins for its next message before blocking
  // (default 0: off; clang.Options.Spin sets it, for hydra bench checker --levers).
  if (const char *Spin = getenv("HYDRA_SHIM_SPIN_US"))
    TheStream.SpinUs = std::max(0, std::min(atoi(Spin), 10000));
  if (RingFd >= 0) {
    if (!gRing.map(RingFd))
      usage("--ring-fd: cannot map it");
    close(RingFd);
  }
  TheStream.Chan.reset(gChanFd, TheStream.SpinUs, gRing.mapped());
  installCrashHandlers();
  startWatchdog(gChanFd);

  // The invocation is what the clang driver makes of: clang -fsyntax-only -iquote DIR FLAGS FILE,
  // less the flags Clang does not take as GCC does, and with every output cleared
  // (invocation.h). The flags it dropped travel with the init event, for the driver to tell once.
  std::string Dir = llvm::StringRef(TheStream.Filename).rsplit('/').first.str();
  if (TheStream.Filename.find('/') == std::string::npos)
    Dir = ".";
  hydra::Invocation Made = hydra::makeInvocation(ClangPath, Dir, Flags, TheStream.Filename);
  llvm::json::Array Dropped;
  for (const hydra::DroppedFlag &D : Made.Dropped)
    Dropped.push_back(llvm::json::Object{{"flag", D.Flag}, {"why", D.Why}});
  llvm::json::Object Init{{"event", "init"}, {"id", TheStream.Session}, {"pid", int64_t(getpid())}, {"off", int64_t(0)}};
  if (!Dropped.empty())
    Init["meta"] = llvm::json::Object{{"dropped_flags", std::move(Dropped)}};
  sendObject(std::move(Init));

  ErrorReporter Reporter;
  std::shared_ptr<CompilerInvocation> Inv = std::move(Made.Inv);
  if (!Inv) {
    send({{"event", "error"},
          {"off", int64_t(0)},
          {"line", int64_t(1)},
          {"col", int64_t(1)},
          {"cat", "fatal"},
          {"diag", "invalid compiler flags: " + Made.Error}});
    send({{"event", "done"}, {"ok", false}});
    _exit(0);
  }
  Inv->getFrontendOpts().DisableFree = true;
  Inv->getDiagnosticOpts().ShowCarets = false; // also silences "N errors generated." on stderr
  Inv->getPreprocessorOpts().addRemappedFile(
      TheStream.Filename,
      llvm::MemoryBuffer::getMemBufferCopy("#pragma hydra_next\n", TheStream.Filename).release());

  CompilerInstance CI;
  CI.setInvocation(std::move(Inv));
  CI.createDiagnostics(&Reporter, /*ShouldOwnClient=*/false);
  // Every file Clang opens goes through the guard (under any -ivfsoverlay, whose targets it
  // then checks too).
  auto Guard = guardFileSystem(CI.getInvocation(), Dir, Root, ClangPath);
  CI.createFileManager(createVFSFromCompilerInvocation(CI.getInvocation(), CI.getDiagnostics(), Guard));
  StreamAction Action;
  CI.ExecuteAction(Action);
  TheStream.finish();
}
