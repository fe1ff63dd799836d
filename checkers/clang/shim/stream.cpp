// stream.cpp: chunks into the preprocessor, progress out, and where errors land in the checked
// text (stream.h). The checkpoints are in checkpoint.cpp.

#include "stream.h"
#include "diagnames.h"
#include "events.h"

#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticLex.h"
#include "clang/Basic/FileManager.h"
#include "clang/Lex/HeaderSearch.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cctype>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>

using namespace clang;

namespace hydra {

const char kChunkMark[] = ".hydra-chunk-";

Stream TheStream;

namespace {

// minorFaults is the process's page faults so far (minor and major; getrusage).
long minorFaults() {
  rusage U{};
  getrusage(RUSAGE_SELF, &U);
  return U.ru_minflt + U.ru_majflt;
}

} // namespace

void Stream::attach(CompilerInstance &CI) {
  this->CI = &CI;
  PP = &CI.getPreprocessor();
  SM = &CI.getSourceManager();
  PP->setTokenWatcher([this](const Token &T) { onToken(T); });
}

void Stream::onToken(const Token &T) {
  // A chunk's buffer starts a prefix before its text's first line.
  EmptyBodies.onToken(T, *SM, [this](FileID FID) -> unsigned {
    const Chunk *C = findChunk(FID);
    return C ? C->PhysLine - C->Prefix : 0;
  });
}

bool Stream::pullNext() {
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

const Chunk *Stream::findChunk(FileID FID) const {
  auto It = std::lower_bound(Chunks.begin(), Chunks.end(), FID,
                             [](const Chunk &C, FileID F) { return C.FID < F; });
  return It != Chunks.end() && It->FID == FID ? &*It : nullptr;
}

void Stream::chunkEnded(FileID FID) {
  if (Chunks.empty() || Chunks.back().FID != FID)
    return; // a header, or not the newest chunk
  flushPending();
  if (CI->getDiagnostics().hasFatalErrorOccurred()) {
    // Clang suppresses every diagnostic after a fatal one: nothing more can be checked.
    finish();
  }
  const Chunk &C = Chunks.back();
  const ChunkInFlight &F = Newest;
  FaultsAtEvent = -1;
  if (Errors == 0 || F.KeepGoing) {
    // shim_us: the shim's own time on the chunk (Clang's lexing, parsing and analysis, and the
    // callbacks), from having read it off the channel to this event (hydra bench checker's
    // breakdown_ms.shim).
    auto Us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - F.Read)
                  .count();
    // shim_faults: page faults over about the same span: from the previous progress event
    // (from the read, after a checkpoint or an error), so the wait for this chunk is in it
    // too. After a checkpoint's fork they are mostly copy-on-write copies of pages the
    // session writes (breakdown_ms.shim_faults_mean).
    long Faults = minorFaults();
    sendProgress(int64_t(C.Start + C.Len), F.Cat, int64_t(Us), int64_t(Faults - F.Faults));
    if (F.Chkpt > 0)
      checkpoint(F.Chkpt, C.Start + C.Len);
    else
      FaultsAtEvent = Faults;
  }
  pullNext();
}

[[noreturn]] void Stream::finish() {
  flushPending();
  bool OK = CI && CI->getDiagnostics().getNumErrors() <= DroppedErrors && Errors == 0;
  send({{"event", "done"}, {"ok", OK}});
  _exit(0);
}

void Stream::onDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) {
  if (L == DiagnosticsEngine::Note) {
    onNote(Info);
    return;
  }
  flushPending();
  if (Info.getID() == diag::pp_include_next_absolute_path && Info.hasSourceManager() &&
      isChunk(SM->getFileID(SM->getFileLoc(Info.getLocation())))) {
    // `#include_next` or __has_include_next in checked text: the whole file is its primary
    // file, where Clang says pp_include_next_in_primary (another warning group), not this
    // (Preprocessor::getIncludeNextStart; a chunk is an entered file). The include searches from
    // the start of the path either way. ChunkFeeder (action.cpp) says the primary file's warning.
    if (L >= DiagnosticsEngine::Error)
      ++DroppedErrors;
    DroppedIncludeNext = Info.getLocation();
    return;
  }
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

void Stream::flushPending() {
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

void Stream::keepNote(const Diagnostic &Info) {
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

void Stream::onNote(const Diagnostic &Info) {
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

void Stream::locate(const Diagnostic &Info, Pending &P) {
  P.At = endOfInput();
  if (!Info.hasSourceManager() || Info.getLocation().isInvalid())
    return;
  if (userPlace(Info.getLocation(), P.At))
    return;
  // An error inside a header (or other non-user buffer).
  SourceLocation FL = SM->getFileLoc(Info.getLocation());
  PresumedLoc PL = SM->getPresumedLoc(FL);
  if (PL.isValid() && ChunkFile) {
    // The checked file read from disk (`#include __FILE__`): the whole file reports the error at
    // that line of the file, which is the checked text's where the disk has the same text.
    OptionalFileEntryRef FE = SM->getFileEntryRefForID(SM->getFileID(FL));
    if (FE && &FE->getFileEntry() == &ChunkFile->getFileEntry()) {
      P.At.Off = std::min<size_t>(SM->getFileOffset(FL), Total);
      P.At.Line = PL.getLine();
      P.At.Col = PL.getColumn();
      return;
    }
  }
  if (PL.isValid()) {
    P.HeaderFile = PL.getFilename();
    P.HeaderLine = PL.getLine();
    P.HeaderCol = PL.getColumn();
  }
  P.InHeader = true;
  P.At = endOfInput();
}

bool Stream::userPlace(SourceLocation Loc, Place &Out) {
  if (Loc.isInvalid())
    return false;
  for (SourceLocation L : {SM->getFileLoc(Loc), SM->getExpansionLoc(Loc)}) {
    FileID FID = SM->getFileID(L);
    if (FID == SM->getMainFileID()) {
      Out = endOfInput();
      return true;
    }
    const Chunk *Found = findChunk(FID);
    if (!Found)
      continue;
    const Chunk &C = *Found;
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

Place Stream::endOfInput() {
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

void Stream::appendEscaped(std::string &Out, llvm::StringRef S) {
  for (char Ch : S) {
    if (Ch == '\\' || Ch == '"')
      Out.push_back('\\');
    Out.push_back(Ch);
  }
}


// chunkBase is the name of a virtual file that stands for the checked file where the disk has
// none: the checked file's absolute path and kChunkMark. Absolute, because FileManager makes
// every file's real path absolute and asks for the working directory each time for a relative
// name; RootedFS says it exists (rootedfs.cpp), so that it gets a real path next to the checked
// file and quoted #include / #embed look there.
const std::string &Stream::chunkBase() {
  if (ChunkBase.empty()) {
    llvm::SmallString<256> Abs(Filename);
    llvm::sys::fs::make_absolute(Abs);
    ChunkBase = std::string(Abs) + kChunkMark;
  }
  return ChunkBase;
}

// unsavedTime is the modification time of a checked file the disk does not have: now, the time
// it would have if saved (__TIMESTAMP__ reads it). Taken once, so every chunk says the same.
time_t Stream::unsavedTime() {
  if (!UnsavedTime)
    UnsavedTime = time(nullptr);
  return UnsavedTime;
}

void Stream::enterChunk(Msg M) {
  // The chunk's lines continue the presumed location where the previous chunk ended, so that
  // __LINE__, user #line directives and reported lines are as in the whole file. That is a line
  // note on the chunk's FileID (what a `#line N "file"` directive makes when the preprocessor
  // lexes it), added directly: no directive text in the buffer, so nothing for -pedantic to
  // judge (C's #line limit of 32767), no line number to spell (past 2^31 after a user's
  // #line), the file name stored once in the line table rather than in every chunk, and the
  // chunk's text starts on its buffer's first line.
  unsigned Line = 1;
  std::string File = Filename;
  // A user's linemarker (`# 1 "x.h" 3`) can say that what follows is a system header: that
  // goes on too (getFileCharacteristic reads the line table's entry).
  SrcMgr::CharacteristicKind Kind = SrcMgr::C_User;
  if (!Chunks.empty()) {
    SourceLocation End = SM->getLocForEndOfFile(Chunks.back().FID);
    PresumedLoc PL = SM->getPresumedLoc(End);
    if (PL.isValid()) {
      Line = PL.getLine();
      File = PL.getFilename();
    }
    Kind = SM->getFileCharacteristic(End);
  }
  // A UTF-8 byte-order mark is skipped by Clang's lexer at the start of any buffer, and counts
  // in the columns of line 1. In the whole file only the document's first bytes are that start:
  // there the lexer skips it as in the whole file. A chunk further on that starts with one gets
  // a newline first, so that its BOM stays the error it is in the whole file.
  std::string Buf;
  if (Total != 0 && llvm::StringRef(M.Text).starts_with("\xEF\xBB\xBF"))
    Buf = "\n";
  Chunk C;
  C.Prefix = uint8_t(Buf.size());
  C.Start = Total;
  C.Len = M.Text.size();
  Newest.Cat = std::move(M.Cat);
  Newest.Chkpt = M.Chkpt;
  Newest.KeepGoing = M.KeepGoing;
  Newest.Read = std::chrono::steady_clock::now();
  Newest.Faults = FaultsAtEvent >= 0 ? FaultsAtEvent : minorFaults();
  C.Last = M.Text.empty() ? '\0' : M.Text.back();
  Buf += M.Text;
  SourceLocation Inc = SM->getLocForStartOfFile(SM->getMainFileID());
  // The chunk's FileID has no include location, as the main file has none: to SourceManager
  // (isInMainFile, the include chain getPresumedLoc walks) its text is main-file text, so Sema's
  // main-file-only warnings (an unused static variable or function, -Wunused-const-variable,
  // -Wheader-hygiene…) and __INCLUDE_LEVEL__ (0) are as in the whole file. The preprocessor still
  // enters it from the main buffer's pragma (EnterSourceFile, with Inc), which is how chunks
  // follow one another. Locations in two chunks have no common include ancestor, so
  // SourceManager::isBeforeInTranslationUnit orders them by FileID: chunk order.
  SourceLocation NoInclude;
  // Each chunk is a FileID of its own over its own buffer, and all of them stand for one file:
  // the checked file itself (ChunkFile), whose text they are. Parts of Clang read the current
  // lexer's file: #embed and __has_embed dereference its FileEntry (and crash on a bare buffer),
  // quoted #include / #embed look next to it, __TIMESTAMP__ is its modification time. The main
  // buffer is no file (main.cpp), so `#include __FILE__` and `#embed __FILE__` open the file on
  // disk, as they do in the whole file. The entry's own contents are never read for a chunk:
  // each FileID's content cache holds its chunk's buffer, and only names the entry as its file.
  // One entry for all chunks, not one each: a virtual file per chunk cost FileManager's maps,
  // SourceManager's content cache map and HeaderSearch's file info an entry per chunk, pages
  // that every chunk wrote again after each checkpoint's fork (docs/checker-benchmark.md,
  // "One file entry for every chunk"). The buffer's own name is only an identifier
  // (diagnostics use the line note's name): short, so that memory does not grow with the path's
  // length times the chunks.
  std::string VName = std::string(kChunkMark) + std::to_string(Chunks.size());
  if (FilePerChunk) { // the lever's "off" row: a virtual file of the chunk's own
    VName = chunkBase() + std::to_string(Chunks.size());
    FileEntryRef FE =
        CI->getFileManager().getVirtualFileRef(VName, off_t(Buf.size()), unsavedTime());
    SM->overrideFileContents(FE, llvm::MemoryBuffer::getMemBufferCopy(Buf, VName));
    PP->getHeaderSearchInfo().getFileInfo(FE); // see below
    C.FID = SM->createFileID(FE, NoInclude, SrcMgr::C_User);
  } else {
    if (!ChunkFile) {
      // The checked file as on disk. A file that is not there yet (an editor's unsaved buffer)
      // gets a virtual entry next to where it will be, made as it would be on saving now.
      ChunkFile = CI->getFileManager().getOptionalFileRef(Filename);
      if (!ChunkFile)
        ChunkFile = CI->getFileManager().getVirtualFileRef(chunkBase(), 0, unsavedTime());
      // HeaderSearch expects every file that can include another to have header info (an
      // #include "x" from a file without it crashes in HeaderSearch::LookupFile): make it, as
      // entering the main file or an #include does.
      PP->getHeaderSearchInfo().getFileInfo(*ChunkFile);
    }
    C.FID = SM->createFileID(llvm::MemoryBuffer::getMemBufferCopy(Buf, VName), SrcMgr::C_User,
                             0, 0, NoInclude);
    // A memory buffer's content cache names no file; this one names ChunkFile. OrigEntry is a
    // public member of SrcMgr::ContentCache, reached here through SourceManager's const view.
    const_cast<SrcMgr::ContentCache &>(SM->getSLocEntry(C.FID).getFile().getContentCache())
        .OrigEntry = *ChunkFile;
  }
  // The note sits at the buffer's start (its physical line 1) and, as `#line N` does, names
  // the line after its own: N = Line + 1 puts the text's first line at Line (Line when a
  // newline comes first, see above).
  SM->AddLineNote(SM->getLocForStartOfFile(C.FID), Line + 1 - C.Prefix,
                  SM->getLineTableFilenameID(File), /*IsFileEntry=*/false,
                  /*IsFileExit=*/false, Kind);
  C.PhysLine = PhysLine;
  PhysLine += lineBreaks(M.Text, AfterCR);
  Total += C.Len;
  Chunks.push_back(C);
  PP->EnterSourceFile(Chunks.back().FID, nullptr, Inc);
}


} // namespace hydra
