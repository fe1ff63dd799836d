// rootedfs.h: the file system Clang reads through, cut down to the roots a session may read
// (rootedfs.cpp).
#pragma once

#include "clang/Frontend/CompilerInvocation.h"
#include "llvm/ADT/IntrusiveRefCntPtr.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/VirtualFileSystem.h"

namespace hydra {

// guardFileSystem makes the file system Clang reads through for the invocation: the checked
// file's directory and the project root, the system include directories the driver chose (so
// another toolchain layout keeps working), the LLVM installation, and what the user's flags name
// (-I/-isystem/-iquote/-idirafter… directories, -include/-imacros files, a --sysroot).
llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> guardFileSystem(const clang::CompilerInvocation &Inv,
                                                                llvm::StringRef FileDir,
                                                                llvm::StringRef Root,
                                                                llvm::StringRef ClangPath);

} // namespace hydra
