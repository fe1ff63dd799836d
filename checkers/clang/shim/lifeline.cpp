// lifeline.cpp: the watchdog thread and the crash handlers (lifeline.h).

#include "lifeline.h"
#include "events.h"
#include "ring.h"

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

namespace hydra {

int gLifeline = -1;

namespace {

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

} // namespace

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

} // namespace hydra
