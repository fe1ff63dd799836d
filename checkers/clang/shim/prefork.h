// prefork.h: what a session does just before a checkpoint's fork so that, after it, the
// session copies fewer of the pages it shares with the checkpoint (prefork.cpp). The shim's
// malloc (alloc.h) and folding-set buckets (foldingset.h) do the rest.
#pragma once

#include "clang/Frontend/CompilerInstance.h"

namespace hydra {

// growFoldingSets gives Clang's folding sets that grow the most with C++ code (and Sema's
// special-member cache) room to grow by half, so that no rehash after the fork rewrites every
// node of one (prefork.cpp has the measurement and the reasons).
void growFoldingSets(clang::CompilerInstance &CI);

// dropDeadStack gives back to the kernel the pages of the main thread's stack below the
// caller's frame: left over from deeper calls (the parser's recursion), dead now.
void dropDeadStack();

} // namespace hydra
