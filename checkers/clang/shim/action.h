// action.h: the front-end action and the diagnostic consumer main() gives Clang (action.cpp).
#pragma once

#include "clang/Basic/Diagnostic.h"
#include "clang/Frontend/FrontendActions.h"

namespace hydra {

// ErrorReporter receives every diagnostic. Relies on: notes follow the diagnostic they belong
// to immediately, so an error is held back until the next non-note (or a chunk end) and its
// notes can place an error from inside a header at the user code that caused it.
class ErrorReporter : public clang::DiagnosticConsumer {
public:
  void HandleDiagnostic(clang::DiagnosticsEngine::Level L, const clang::Diagnostic &Info) override;
};

// StreamAction is a plain -fsyntax-only action with the extension points of action.cpp
// (NextChunkPragma, ChunkFeeder) installed on its preprocessor before the main file is entered.
class StreamAction : public clang::SyntaxOnlyAction {
protected:
  bool BeginSourceFileAction(clang::CompilerInstance &CI) override;
};

} // namespace hydra
