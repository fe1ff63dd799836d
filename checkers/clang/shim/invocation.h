// invocation.h: the compiler invocation of a session, built from the driver's flags, with every
// option that writes a file or loads code cleared, and the flags Clang does not take as GCC does
// dropped (checkers/clang/README.md, "Compile flags").
#pragma once

#include "clang/Frontend/CompilerInvocation.h"

#include <memory>
#include <string>
#include <vector>

namespace hydra {

// DroppedFlag is a flag left out of the invocation, and Clang's own reason.
struct DroppedFlag {
  std::string Flag;
  std::string Why;
};

// Invocation is what makeInvocation made: the invocation, or the driver's errors.
struct Invocation {
  std::shared_ptr<clang::CompilerInvocation> Inv;
  std::vector<DroppedFlag> Dropped;
  std::string Error; // set when no invocation could be made
};

// makeInvocation builds the invocation of `CLANG -fsyntax-only -iquote DIR FLAGS FILE`.
//
// A project's database is written for its compiler, often GCC. Flags Clang rejects as unknown
// (-fconserve-stack), GCC optimisation flags it ignores (-fno-tree-vrp) and warning options it
// does not know (-Wlogical-op) would, under -Werror, turn into errors no GCC build gives; each is
// dropped, with Clang's own diagnostic as the reason, and the invocation made again. Then
// sanitizeInvocation clears every output.
Invocation makeInvocation(const std::string &ClangPath, const std::string &Dir,
                          std::vector<std::string> Flags, const std::string &File);

// sanitizeInvocation clears every option of Inv that writes a file, loads code or reads a file
// that steers the compiler, whatever spelling set it (the Go side drops their flags already:
// checkers/clang/compiledb; this is the second line), and forces a syntax-only run. Modelled on
// clangd's disableUnsupportedOptions (clangd/Compiler.cpp), and going further.
void sanitizeInvocation(clang::CompilerInvocation &Inv);

} // namespace hydra
