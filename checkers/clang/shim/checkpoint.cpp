// checkpoint.cpp: a checkpoint is a fork() of the session while it waits for its next chunk;
// the child stays dormant on a private control socket until a resume forks a session from it
// (stream.h, Stream::checkpoint and Stream::dormant).

#include "alloc.h"
#include "events.h"
#include "foldingset.h"
#include "lifeline.h"
#include "prefork.h"
#include "ring.h"
#include "stream.h"

#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace hydra {

void Stream::checkpoint(int64_t ID, size_t Off) {
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

void Stream::dormant(int Ctl, int64_t ID) {
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

} // namespace hydra
