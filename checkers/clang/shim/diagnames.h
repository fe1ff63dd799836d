// diagnames.h: Clang's diagnostics by name, and the coarse error classes Hydra reports
// (diagnames.cpp).
#pragma once

#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/StringRef.h"

namespace hydra {

// diagName returns the enumerator name of diagnostic ID (err_undeclared_var_use, …), or "".
llvm::StringRef diagName(unsigned ID);

// categorize maps a diagnostic to the coarse classes of checkers/checker.go (Cat* constants).
const char *categorize(clang::DiagnosticsEngine::Level L, unsigned ID, llvm::StringRef Name);

} // namespace hydra
