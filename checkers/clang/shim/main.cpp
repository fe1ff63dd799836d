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
// Offsets are bytes of the checked text; a byte before a chunk's text (Chunk::Prefix) never counts.
//
// Processes never outlive their owner: every process polls a "lifeline" pipe (the owner keeps the
// only write end) together with its channel or control socket and exits on hang-up; an active
// session also runs a watchdog thread that does the same (and watches the channel for hang-up)
// while the parser is busy, so a long parse ends with its owner too; the first process gets
// PR_SET_PDEATHSIG from its starter, a resumed session from the dormant checkpoint it forks from.
// Files, one concern each (checkers/clang/README.md has the map):
//   main.cpp        the command line, the invocation, and the run;
//   events.*        shim → driver event lines;   channel.*   driver → shim messages;
//   ring.*          the shared-memory ring beside the channel's socket;
//   lifeline.*      the watchdog thread and the crash handlers (processes end with their owner);
//   stream.*        the chunks, progress, and where errors land in the checked text;
//   spelling.*      chunks' spelling lines as the file's, where Sema judges an empty body;
//   checkpoint.cpp  fork() checkpoints and resumed sessions;
//   prefork.*       folding-set headroom and the dead stack, before a fork;
//   alloc.*, foldingset.*  the generational malloc and folding-set buckets beside the table;
//   diagnames.*     diagnostic names and error classes;
//   invocation.*    the compiler invocation, with every output cleared;
//   rootedfs.*      RootedFS (vfs::ProxyFileSystem): hides every file outside the allowed roots.
// Clang extension points, each in its own class (action.cpp, action.h):
//   NextChunkPragma  (PragmaHandler)      starts the stream from the main buffer;
//   ChunkFeeder      (PPCallbacks)        pulls the next chunk when the previous one ends;
//   ErrorReporter    (DiagnosticConsumer) turns error diagnostics into error events;
//   StreamAction     (SyntaxOnlyAction)   installs the three above on the preprocessor;
//   the preprocessor's token watcher      (Stream::attach) follows the parser's tokens (spelling.h).

#include "action.h"
#include "events.h"
#include "invocation.h"
#include "lifeline.h"
#include "ring.h"
#include "rootedfs.h"
#include "stream.h"

#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendOptions.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <string>
#include <unistd.h>
#include <vector>

#ifndef HYDRA_CLANG_PATH
#define HYDRA_CLANG_PATH "/usr/lib/llvm-19/bin/clang"
#endif

using namespace clang;
using namespace hydra;

namespace {

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
  // The main file is a buffer named as the checked file (__BASE_FILE__ and the chunks' line
  // notes name it so), not the checked file remapped: the file on disk stays what it is, so that
  // `#include __FILE__` reads it as in the whole file. Its one line starts the stream (action.h).
  FrontendOptions &FO = Inv->getFrontendOpts();
  if (FO.Inputs.size() == 1) {
    auto *Main =
        llvm::MemoryBuffer::getMemBufferCopy("#pragma hydra_next\n", TheStream.Filename).release();
    FO.Inputs[0] = FrontendInputFile(Main->getMemBufferRef(), FO.Inputs[0].getKind(),
                                     FO.Inputs[0].isSystem());
  }

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
