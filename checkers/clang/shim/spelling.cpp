// spelling.cpp: chunks' spelling lines as the file's physical lines (spelling.h).

#include "spelling.h"
#include "privatemember.h"


#include <algorithm>
#include <sys/mman.h>
#include <unistd.h>

using namespace clang;

namespace hydra {

// A line table's storage is private: its first element is the size, the line starts follow
// (SrcMgr::LineOffsetMapping in clang/Basic/SourceManager.h).
HYDRA_PRIVATE_MEMBER(SrcMgr::LineOffsetMapping, Storage, unsigned *)

EmptyBodyWatch::Body EmptyBodyWatch::onToken(const Token &T) {
  Body Found = None;
  bool EndsDoBody = false;
  switch (T.getKind()) {
  case tok::kw_if:
  case tok::kw_switch:
  case tok::kw_constexpr: // if constexpr (…)
    Last = IfWord;
    break;
  case tok::kw_for:
    Last = LoopWord;
    break;
  case tok::kw_while:
    Last = DoBodyEnded ? DoWhile : LoopWord;
    if (DoBodyEnded)
      Dos.pop_back();
    break;
  case tok::kw_do:
    Dos.push_back(Braces);
    Last = Other;
    break;
  case tok::l_paren:
    Parens.push_back(Last == IfWord || Last == LoopWord ? Last : Other);
    Last = Other;
    break;
  case tok::r_paren: {
    Prev Opened = Parens.empty() ? Other : Parens.back();
    if (!Parens.empty())
      Parens.pop_back();
    Last = Opened == IfWord ? IfClose : Opened == LoopWord ? LoopClose : Other;
    break;
  }
  case tok::l_brace:
    ++Braces;
    Last = Other;
    break;
  case tok::r_brace:
    if (Braces > 0)
      --Braces;
    while (!Dos.empty() && Dos.back() > Braces) // a do whose while never came
      Dos.pop_back();
    EndsDoBody = !Dos.empty() && Dos.back() == Braces;
    Last = Other;
    break;
  case tok::semi:
    Found = Last == IfClose ? IfBody : Last == LoopClose ? LoopBody : None;
    EndsDoBody = !Dos.empty() && Dos.back() == Braces;
    Last = Other;
    break;
  default:
    Last = Other;
  }
  DoBodyEnded = EndsDoBody;
  return Found;
}

bool SpellingLines::shift(SourceManager &SM, FileID FID, unsigned FirstLine) {
  if (Failed)
    return false;
  if (!Base) {
    // Address space for the tables: a table costs 4 bytes a line of the file before its chunk,
    // untouched. MAP_NORESERVE: none of it is committed until written.
    for (size_t Try : {size_t(1) << 38, size_t(1) << 34, size_t(1) << 30}) {
      void *P = mmap(nullptr, Try, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (P != MAP_FAILED) {
        Base = static_cast<char *>(P);
        Cap = Try;
        break;
      }
    }
    if (!Base) {
      Failed = true;
      return false;
    }
  }
  auto [It, New] = Live.try_emplace(FID);
  if (!New) {
    ++It->second.Holds;
    return true;
  }
  std::optional<llvm::MemoryBufferRef> Buf = SM.getBufferOrNone(FID);
  size_t Zeros = FirstLine > 0 ? FirstLine - 1 : 0;
  Scratch.Reset();
  SrcMgr::LineOffsetMapping Own;
  if (Buf)
    Own = SrcMgr::LineOffsetMapping::get(*Buf, Scratch);
  size_t Entries = Zeros + Own.size();
  size_t Page = size_t(getpagesize());
  size_t Bytes = ((1 + Entries) * sizeof(unsigned) + Page - 1) / Page * Page;
  if (!Buf || Entries > UINT32_MAX || Bytes > Cap - Used) {
    Live.erase(It);
    return false;
  }
  // Each table on pages of its own, so that release can give them back whole.
  unsigned *Lines = reinterpret_cast<unsigned *>(Base + Used);
  Lines[0] = unsigned(Entries);
  // Lines[1 … Zeros] stay as mmap made them: zero, and never written.
  std::copy(Own.begin(), Own.end(), Lines + 1 + Zeros);
  const SrcMgr::ContentCache &CC = SM.getSLocEntry(FID).getFile().getContentCache();
  unsigned *&Storage = CC.SourceLineCache.*memberOf(StorageTag{}); // SourceLineCache is mutable
  It->second = Table{Storage, Base + Used, Bytes, 1};
  Storage = Lines;
  Used += Bytes;
  return true;
}

void SpellingLines::release(SourceManager &SM, FileID FID) {
  auto It = Live.find(FID);
  if (It == Live.end() || --It->second.Holds > 0)
    return;
  const SrcMgr::ContentCache &CC = SM.getSLocEntry(FID).getFile().getContentCache();
  CC.SourceLineCache.*memberOf(StorageTag{}) = It->second.Old;
  // The pages go back to the kernel; reading them again would read zeros. Nothing reads them:
  // the address space is not handed out again.
  madvise(It->second.Region, It->second.Bytes, MADV_DONTNEED);
  Live.erase(It);
}

// SourceManager caches its last line query by FileID and line index (getLineNumber,
// getColumnNumber): a chunk whose table changes must not be that FileID.
HYDRA_PRIVATE_MEMBER(SourceManager, LastLineNoFileIDQuery, FileID)

void EmptyBodyLines::onToken(const Token &T, SourceManager &SM,
                             llvm::function_ref<unsigned(FileID)> FirstLine) {
  ++Tokens;
  auto Forget = [&](FileID FID) {
    Tables.release(SM, FID);
    if (SM.*memberOf(LastLineNoFileIDQueryTag{}) == FID)
      SM.*memberOf(LastLineNoFileIDQueryTag{}) = FileID();
  };
  while (!Ifs.empty() && Ifs.front().Until <= Tokens) {
    Forget(Ifs.front().FID);
    Ifs.pop_front();
  }
  EmptyBodyWatch::Body B = Watch.onToken(T);
  for (size_t I = Loops.size(); I > 0 && Loops[I - 1].Depth > Watch.braces(); --I)
    if (Loops[I - 1].Until == 0)
      Loops[I - 1].Until = Tokens + 2; // the '}' is had; Sema judges once the parser is past it
  while (!Loops.empty() && Loops.back().Until != 0 && Loops.back().Until <= Tokens) {
    Forget(Loops.back().FID);
    Loops.pop_back();
  }
  if (B == EmptyBodyWatch::None || Watch.braces() == 0 || Tables.live() >= MaxLive)
    return;
  // The ';' is spelled in the checked text or in a #define there (or in a header, whose lines
  // are its own).
  FileID FID = SM.getFileID(SM.getSpellingLoc(T.getLocation()));
  unsigned First = FirstLine(FID);
  if (First == 0 || !Tables.shift(SM, FID, First))
    return;
  if (SM.*memberOf(LastLineNoFileIDQueryTag{}) == FID)
    SM.*memberOf(LastLineNoFileIDQueryTag{}) = FileID();
  if (B == EmptyBodyWatch::IfBody)
    Ifs.push_back({FID, Tokens + 2, 0});
  else
    Loops.push_back({FID, 0, Watch.braces()});
}

unsigned lineBreaks(llvm::StringRef Text, bool &AfterCR) {
  unsigned N = 0;
  for (char C : Text) {
    if (C == '\r')
      ++N;
    else if (C == '\n' && !AfterCR)
      ++N;
    AfterCR = C == '\r';
  }
  return N;
}

} // namespace hydra
