// action.cpp: the Clang extension points through which chunks enter the preprocessor and
// diagnostics leave it (action.h). Each is a class of its own, with the Clang behaviour it relies
// on in its comment.

#include "action.h"
#include "stream.h"

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

} // namespace

void ErrorReporter::HandleDiagnostic(DiagnosticsEngine::Level L, const Diagnostic &Info) {
  DiagnosticConsumer::HandleDiagnostic(L, Info);
  TheStream.onDiagnostic(L, Info);
}

bool StreamAction::BeginSourceFileAction(CompilerInstance &CI) {
  Preprocessor &PP = CI.getPreprocessor();
  PP.AddPragmaHandler(new NextChunkPragma()); // the preprocessor owns it
  PP.addPPCallbacks(std::make_unique<ChunkFeeder>());
  TheStream.attach(CI);
  return SyntaxOnlyAction::BeginSourceFileAction(CI);
}

} // namespace hydra
