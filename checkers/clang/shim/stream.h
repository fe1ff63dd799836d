// stream.h: the session's stream of chunks (stream.cpp, checkpoint.cpp), the state that the
// Clang extension points (action.cpp) share: the chunks entered so far, the channel, the pending
// error, and the checkpoints forked from it.
#pragma once

#include "channel.h"
#include "spelling.h"

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/FileEntry.h"
#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Lex/Preprocessor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/JSON.h"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

namespace hydra {

// kChunkMark ends the name of the chunks' virtual file (<checked file><mark>), and starts the
// name of each chunk's buffer (<mark><index>). RootedFS answers for such names
// without touching the disk (rootedfs.cpp).
extern const char kChunkMark[];

// Chunk is one piece of checked text as Clang sees it: a FileID whose buffer is the chunk's
// text (after Prefix bytes that are not part of it: a newline before a byte-order mark, see
// Stream::enterChunk), with a line note that continues the file's presumed lines. One is kept
// for every chunk of the session, so it is small: what only the newest chunk needs until its
// progress event is in ChunkInFlight.
struct Chunk {
  clang::FileID FID;
  uint8_t Prefix = 0;
  char Last = 0;    // last byte of the chunk's text ('\0' when empty)
  size_t Start = 0; // global offset of the chunk's first byte
  size_t Len = 0;   // bytes of text (without the prefix)
  unsigned PhysLine = 1; // the file's physical line where the chunk's text starts
};

// ChunkInFlight is what the newest chunk needs until its progress event.
struct ChunkInFlight {
  std::string Cat;
  int64_t Chkpt = 0; // checkpoint requested at its end, or 0
  // KeepGoing: report progress and take the checkpoint even after an error (the engine
  // excuses errors that were in the document before; Clang recovers and checks on).
  bool KeepGoing = false;
  std::chrono::steady_clock::time_point Read; // when its message had been read
  // The process's page faults (minor + major) by then: those at the previous progress event
  // when nothing but waiting came between (one getrusage() a chunk instead of two).
  long Faults = 0;
};

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

  void attach(clang::CompilerInstance &CI);

  // pullNext blocks for the next message and enters the next chunk; false at end of input.
  bool pullNext();

  // chunkEnded runs when the lexer leaves chunk FID (ChunkFeeder::FileChanged). It reports
  // progress, takes a requested checkpoint, then blocks for the next chunk.
  void chunkEnded(clang::FileID FID);

  // finish ends the session: flush, report the verdict, exit without tearing Clang down.
  [[noreturn]] void finish();

  // ── diagnostics ──

  void onDiagnostic(clang::DiagnosticsEngine::Level L, const clang::Diagnostic &Info);

  void flushPending();

  // isChunk reports whether FID is one of the chunks of checked text.
  bool isChunk(clang::FileID FID) const { return findChunk(FID) != nullptr; }

  // takeDroppedIncludeNext returns where onDiagnostic last dropped an entered file's
  // #include_next warning in checked text, and forgets it (invalid: none since).
  clang::SourceLocation takeDroppedIncludeNext() {
    return std::exchange(DroppedIncludeNext, clang::SourceLocation());
  }

  // onToken sees every token the parser gets (the preprocessor's token watcher, set in attach):
  // a ';' that Sema may judge an empty body gets its chunk's spelling lines as the file's.
  void onToken(const clang::Token &T);

  // The preprocessor and source manager the stream is attached to (attach).
  clang::Preprocessor &preprocessor() const { return *PP; }
  clang::SourceManager &sourceManager() const { return *SM; }

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
  void keepNote(const clang::Diagnostic &Info);

  void onNote(const clang::Diagnostic &Info);

  void locate(const clang::Diagnostic &Info, Pending &P);

  // userPlace maps Loc to a place in the checked text if it lies in a chunk (or in the main
  // buffer, which stands for end of input).
  bool userPlace(clang::SourceLocation Loc, Place &Out);

  // endOfInput is where Clang puts end-of-file: the final newline if the text ends with one.
  Place endOfInput();

  // ── chunks ──

  static void appendEscaped(std::string &Out, llvm::StringRef S);


  void enterChunk(Msg M);

  // ── checkpoints ──

  // checkpoint forks a dormant copy of this process for the prefix up to Off. Its control
  // channel is a socket pair made before the fork: the child keeps one end, the other goes to
  // the driver with the chkpt event (SCM_RIGHTS), together with a pidfd of the child. The pair
  // has no name, so only the driver (who holds the other end) can ever talk to the checkpoint.
  void checkpoint(int64_t ID, size_t Off);

  // dormant is the checkpoint's life: wait on the control socket for resume or free. A resume
  // brings the new session's channel (SCM_RIGHTS) and forks a grandchild that returns from here
  // into the parser with that channel. Free, or the driver closing the control socket, ends it.
  void dormant(int Ctl, int64_t ID);

  clang::CompilerInstance *CI = nullptr;
  clang::Preprocessor *PP = nullptr;
  clang::SourceManager *SM = nullptr;
  // Chunks in the order they were entered, which is the order of their FileIDs (SourceManager
  // numbers FileIDs as it makes them): findChunk searches it.
  std::vector<Chunk> Chunks;
  ChunkInFlight Newest;
  const Chunk *findChunk(clang::FileID FID) const;
  std::string ChunkBase; // the checked file's absolute path and kChunkMark (chunkBase)
  const std::string &chunkBase();
  time_t UnsavedTime = 0; // unsavedTime's answer, once asked
  time_t unsavedTime();
  clang::OptionalFileEntryRef ChunkFile; // the one file entry every chunk names (enterChunk)
  long FaultsAtEvent = -1; // page faults when the last progress event was sent; -1: read anew
  size_t Total = 0; // bytes of text entered so far
  // The file's physical line where the next chunk's text starts, and whether the text so far
  // ends in '\r' (lineBreaks): spelling lines of chunks that need them (spelling.h).
  unsigned PhysLine = 1;
  bool AfterCR = false;
  EmptyBodyLines EmptyBodies;
  unsigned Errors = 0;
  // Errors Clang counted that the checked text does not have: the group Clang gives
  // `#include_next` in a chunk, which the whole file reports under another (onDiagnostic).
  unsigned DroppedErrors = 0;
  // Where the last dropped one was: the __has_include_next (or macro expanding to it) that
  // ChunkFeeder::HasInclude then warns for, as the primary file's warning.
  clang::SourceLocation DroppedIncludeNext;
  Pending Pend;
};

// TheStream is the process's one stream.
extern Stream TheStream;

} // namespace hydra
