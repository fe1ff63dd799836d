// action.cpp: the Clang extension points through which chunks enter the preprocessor and
// diagnostics leave it (action.h). Each is a class of its own, with the Clang behaviour it relies
// on in its comment.

#include "action.h"
#include "privatemember.h"
#include "stream.h"

#include "clang/Basic/DiagnosticLex.h"

#include "clang/Basic/CharInfo.h"
#include "clang/Lex/MacroInfo.h"
#include "clang/Lex/PPCallbacks.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"

using namespace clang;

namespace hydra {

namespace {

// NextChunkPragma handles `#pragma hydra_next`, the only line of the main buffer. Relies on:
// a pragma handler runs while the main lexer is in directive mode; once it has read up to the
// end of the directive (eod), entering a new file makes the preprocessor continue lexing from
// that file, and the main file resumes after the pragma when it ends (as for #include).
class NextChunkPragma : public PragmaHandler {
public:
  NextChunkPragma() : PragmaHandler("hydra_next") {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer, Token &Tok) override {
    SourceLocation NameLoc = Tok.getLocation();
    while (Tok.isNot(tok::eod) && Tok.isNot(tok::eof))
      PP.LexUnexpandedToken(Tok);
    // Only the main buffer's pragma starts the stream; the same pragma in checked text is
    // ignored, as an unknown pragma would be.
    if (Started) {
      // As Clang's PragmaNamespace::HandlePragma does for a pragma it has no handler for, so that
      // checked text reads as in the whole file (-Wunknown-pragmas).
      PP.Diag(NameLoc, diag::warn_pragma_ignored);
      return;
    }
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
//
// It also says what the primary file's `#include_next` and __has_include_next say, where a chunk
// makes Clang say something else (Stream::onDiagnostic drops that): Clang's
// Preprocessor::getIncludeNextStart warns pp_include_next_in_primary in the main file unless it
// is a header (-x c-header, a .h file), after which the lookup and this callback follow.
class ChunkFeeder : public PPCallbacks {
public:
  void FileChanged(SourceLocation, FileChangeReason Reason, SrcMgr::CharacteristicKind,
                   FileID PrevFID) override {
    if (Reason == ExitFile)
      TheStream.chunkEnded(PrevFID);
  }
  void InclusionDirective(SourceLocation, const Token &IncludeTok, StringRef, bool,
                          CharSourceRange, OptionalFileEntryRef, StringRef, StringRef,
                          const Module *, bool, SrcMgr::CharacteristicKind) override {
    const IdentifierInfo *II = IncludeTok.getIdentifierInfo();
    TheStream.takeDroppedIncludeNext();
    if (II && II->getPPKeywordID() == tok::pp_include_next)
      primaryIncludeNext(IncludeTok.getLocation());
  }
  // HasInclude is the same callback for __has_include and __has_include_next, with the file
  // name's location. It is __has_include_next where Stream::onDiagnostic has just dropped the
  // entered file's warning for it, or where the keyword is spelled before the name (when the
  // user's flags turn that warning off, Clang does not say it).
  void HasInclude(SourceLocation FilenameLoc, StringRef, bool, OptionalFileEntryRef,
                  SrcMgr::CharacteristicKind) override {
    SourceManager &SM = TheStream.sourceManager();
    SourceLocation Dropped = TheStream.takeDroppedIncludeNext();
    if (Dropped.isValid()) {
      primaryIncludeNext(Dropped);
      return;
    }
    if (FilenameLoc.isInvalid() || !FilenameLoc.isFileID())
      return;
    auto [FID, Off] = SM.getDecomposedLoc(FilenameLoc);
    llvm::StringRef Before = SM.getBufferData(FID).take_front(Off);
    Before = Before.rtrim(" \t\f\v(").rtrim(); // __has_include_next ( <x>
    size_t Start = Before.size();
    while (Start > 0 && (isAsciiIdentifierContinue(Before[Start - 1])))
      --Start;
    if (namesHasIncludeNext(Before.substr(Start), 0))
      primaryIncludeNext(FilenameLoc.getLocWithOffset(-int(Off - Start)));
  }

private:
  // namesHasIncludeNext says whether Name is __has_include_next or an object-like macro whose
  // expansion ends in it (through others, a few deep): `#define HIN __has_include_next`.
  static bool namesHasIncludeNext(llvm::StringRef Name, int Depth) {
    if (Name == "__has_include_next")
      return true;
    if (Name.empty() || Depth > 8)
      return false;
    Preprocessor &PP = TheStream.preprocessor();
    const MacroInfo *MI = PP.getMacroInfo(PP.getIdentifierInfo(Name));
    if (!MI || MI->isFunctionLike() || MI->getNumTokens() == 0)
      return false;
    const Token &Last = MI->getReplacementToken(MI->getNumTokens() - 1);
    const IdentifierInfo *II = Last.getIdentifierInfo();
    return II && namesHasIncludeNext(II->getName(), Depth + 1);
  }

  static void primaryIncludeNext(SourceLocation Loc) {
    Preprocessor &PP = TheStream.preprocessor();
    SourceManager &SM = TheStream.sourceManager();
    if (PP.getLangOpts().IsHeaderFile || !TheStream.isChunk(SM.getFileID(SM.getFileLoc(Loc))))
      return;
    PP.Diag(Loc, diag::pp_include_next_in_primary);
  }
};

// MainFilePragma stands in for a built-in pragma that only warns in the main file: `#pragma
// once` and `#pragma GCC|clang system_header`. Relies on: Clang's own handlers (Lex/Pragma.cpp)
// call Preprocessor::HandlePragmaOnce / HandlePragmaSystemHeader, which give
// pp_pragma_once_in_main_file / pp_pragma_sysheader_in_main_file and do nothing else when
// isInPrimaryFile(). A chunk is an entered file, not the primary one, though its text is the main
// file's; there the original would mark the chunk's file include-once or a system header (and
// HeaderSearch has no header info for it). So in a chunk this handler does what the original does
// in the main file; anywhere else (a real header) it calls the original.
class MainFilePragma : public PragmaHandler {
public:
  MainFilePragma(PragmaHandler *Orig, bool Once)
      : PragmaHandler(Orig->getName()), Orig(Orig), Once(Once) {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer Introducer, Token &Tok) override {
    PreprocessorLexer *L = PP.getCurrentFileLexer();
    if (!L || !TheStream.isChunk(L->getFileID())) {
      Orig->HandlePragma(PP, Introducer, Tok);
      return;
    }
    if (Once) { // PragmaOnceHandler, then HandlePragmaOnce's main-file branch (the TU is never a
                // PCH prefix: -fsyntax-only)
      PP.CheckEndOfDirective("pragma once");
      if (!PP.getLangOpts().IsHeaderFile)
        PP.Diag(Tok, diag::pp_pragma_once_in_main_file);
      return;
    }
    PP.Diag(Tok, diag::pp_pragma_sysheader_in_main_file); // PragmaSystemHeaderHandler
    PP.CheckEndOfDirective("pragma");
  }

private:
  std::unique_ptr<PragmaHandler> Orig; // removed from the preprocessor, owned here
  bool Once;
};

// The preprocessor's root pragma namespace is private (Preprocessor::PragmaHandlers).
HYDRA_PRIVATE_MEMBER(Preprocessor, PragmaHandlers, std::unique_ptr<PragmaNamespace>)

// replacePragma puts a MainFilePragma in place of the handler Name in namespace NS ("" for the
// root), if Clang has one there.
void replacePragma(Preprocessor &PP, llvm::StringRef NS, llvm::StringRef Name, bool Once) {
  PragmaNamespace *Space = (PP.*memberOf(PragmaHandlersTag{})).get();
  if (!NS.empty()) {
    PragmaHandler *H = Space->FindHandler(NS, /*IgnoreNull=*/false);
    Space = H ? H->getIfNamespace() : nullptr;
  }
  PragmaHandler *Orig = Space ? Space->FindHandler(Name, /*IgnoreNull=*/false) : nullptr;
  if (!Orig || Orig->getIfNamespace())
    return;
  PP.RemovePragmaHandler(NS, Orig); // gives ownership back (PragmaNamespace::RemovePragmaHandler)
  PP.AddPragmaHandler(NS, new MainFilePragma(Orig, Once));
}

} // namespace

void ErrorReporter::HandleDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) {
  DiagnosticConsumer::HandleDiagnostic(L, Info);
  TheStream.onDiagnostic(L, Info);
}

bool StreamAction::BeginSourceFileAction(CompilerInstance &CI) {
  Preprocessor &PP = CI.getPreprocessor();
  PP.AddPragmaHandler(new NextChunkPragma()); // the preprocessor owns it
  replacePragma(PP, "", "once", true);
  replacePragma(PP, "GCC", "system_header", false);
  replacePragma(PP, "clang", "system_header", false);
  PP.addPPCallbacks(std::make_unique<ChunkFeeder>());
  TheStream.attach(CI);
  return SyntaxOnlyAction::BeginSourceFileAction(CI);
}

} // namespace hydra
