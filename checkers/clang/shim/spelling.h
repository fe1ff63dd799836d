// spelling.h: a chunk's spelling lines as the whole file's physical lines, where Sema compares
// them with presumed lines (spelling.cpp).
//
// Clang numbers a FileID's spelling lines from its buffer's first line, and a chunk is a buffer
// of its own: past the document's first chunk its spelling lines are not the file's. Presumed
// lines are right (the chunk's line note), and nearly all of Clang uses those. One check mixes the
// two: Sema's ShouldDiagnoseEmptyStmtBody (SemaChecking.cpp) warns "if statement has empty body"
// (and for, while, switch, range-for: -Wempty-body) when the statement's presumed line equals the
// ';' 's spelling line. With a chunk's own numbering `if (x);` past the first chunk is never
// reported, and `if (x)` with its ';' lines further down can be, where the chunk's own line
// number of the ';' happens to be the if's line in the file.
//
// A FileID's spelling line is the index, in its content cache's line table (SourceLineCache, a
// sorted array of line-start offsets), of the first start past the location. So a chunk that
// holds such a ';' gets a table built here: as many zero offsets in front of its real ones as
// the file has lines before it. A zero is below every offset asked for (Clang asks with
// offset + 1), so the search lands on the same real entry as before, with an index that many
// lines further on. Presumed lines do not move: getPresumedLoc counts from the line note's own
// spelling line. The zeros are in fresh anonymous memory that is never written, so they cost
// address space, not memory (reading it maps the kernel's zero page); each such chunk costs a
// page or two of memory for its own entries and the table's size, which is why only chunks that
// hold a ';' right after a condition get one (EmptyBodyWatch), from before Sema can look at it
// until it has (EmptyBodyLines).
#pragma once

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Token.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Allocator.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace hydra {

// EmptyBodyWatch sees every token the parser gets (Preprocessor::setTokenWatcher: after macro
// expansion, before the parser acts on it) and finds each ';' that directly follows the ')' of a
// condition: of if, switch, for, while (not a do-while's), and `if constexpr`. Sema's empty-body
// check looks at no other ';', and only after the parser has had it: the chunk where the ';' is
// spelled (in the text, or in a #define) can be given its spelling lines in time.
class EmptyBodyWatch {
public:
  enum Body { None, IfBody, LoopBody };
  // onToken follows T and says whether T is such a ';', and whose: if and switch bodies are
  // judged by Sema as soon as the parser knows no else follows (ActOnIfStmt,
  // ActOnFinishSwitchStmt), for and while bodies when the compound statement around them ends
  // (ActOnCompoundStmt → DiagnoseEmptyLoopBody).
  Body onToken(const clang::Token &T);
  // braces is how many braces are open: the ';' 's compound statement is the innermost.
  unsigned braces() const { return Braces; }

private:
  enum Prev { Other, IfWord, LoopWord, DoWhile, IfClose, LoopClose };
  Prev Last = Other;
  std::vector<Prev> Parens; // open parens: IfWord or LoopWord for a condition's, else Other
  // Braces and do statements: a `while` right after the '}' (or the ';') that ends a do's body
  // at its own depth is the do-while's, whose ';' is no body.
  unsigned Braces = 0;
  std::vector<unsigned> Dos; // brace depth of each do whose while is to come
  bool DoBodyEnded = false;  // the last token ended the innermost do's body
};

// SpellingLines gives chunks line tables numbered as the file's physical lines, and takes them
// back.
class SpellingLines {
public:
  // shift makes FID's buffer line 1 the file's physical line FirstLine, for Clang's spelling
  // lines, until release. It returns false where it cannot (no address space left): the chunk
  // keeps its own numbering.
  bool shift(clang::SourceManager &SM, clang::FileID FID, unsigned FirstLine);
  // release gives FID back the table it had (none: Clang makes one when asked) and returns the
  // shifted table's memory.
  void release(clang::SourceManager &SM, clang::FileID FID);
  size_t live() const { return Live.size(); }

private:
  struct Table {
    unsigned *Old = nullptr; // the chunk's table before (Clang's, or none yet)
    char *Region = nullptr;  // this table's pages
    size_t Bytes = 0;
    unsigned Holds = 0; // how many ';' hold it
  };
  llvm::DenseMap<clang::FileID, Table> Live;
  char *Base = nullptr; // the reserved region, tables one after another, each on fresh pages
  size_t Cap = 0, Used = 0;
  bool Failed = false;            // the reservation failed: shift does nothing
  llvm::BumpPtrAllocator Scratch; // for Clang's own table of the buffer, copied from
};

// EmptyBodyLines follows the tokens (EmptyBodyWatch) and holds a chunk's spelling lines as the
// file's from the moment one of its ';' may be judged an empty body until Sema has judged it:
// two tokens later for if and switch, two tokens after the compound statement around a for or
// while has ended. At most MaxLive chunks at once (a page or two each); past that, a chunk keeps
// its own numbering.
class EmptyBodyLines {
public:
  static constexpr size_t MaxLive = 4096;
  // onToken follows T. FirstLine gives the file's physical line at a FileID's buffer start, or
  // 0 for a FileID that is no chunk of checked text.
  void onToken(const clang::Token &T, clang::SourceManager &SM,
               llvm::function_ref<unsigned(clang::FileID)> FirstLine);

private:
  struct Held {
    clang::FileID FID;
    uint64_t Until = 0; // the token count at which it is released (0: not known yet)
    unsigned Depth = 0; // loops: released after the braces close below this
  };
  EmptyBodyWatch Watch;
  SpellingLines Tables;
  std::deque<Held> Ifs;
  std::vector<Held> Loops;
  uint64_t Tokens = 0;
};

// lineBreaks counts the line breaks in Text as Clang's line tables do (LineOffsetMapping::get:
// "\r\n", "\n" and a lone "\r" are one each). AfterCR says the text before ended in '\r', whose
// '\n' at Text's start is then no new break; it is updated for the next call.
unsigned lineBreaks(llvm::StringRef Text, bool &AfterCR);

} // namespace hydra
