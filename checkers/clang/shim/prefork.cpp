// prefork.cpp: folding-set headroom and the dead stack, before a checkpoint's fork (prefork.h).

#include "prefork.h"
#include "privatemember.h"

#include "clang/AST/ASTContext.h"
#include "clang/Sema/Sema.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace clang;

namespace hydra {

namespace {

// ── headroom in Clang's folding sets, before the first checkpoint ──
//
// Clang keeps its uniqued types (and names, nested-name-specifiers, special-member lookups) in
// llvm::FoldingSets: intrusive hash tables whose nodes hold the link to the next node of their
// bucket. When a set passes twice as many nodes as buckets, FoldingSetBase::GrowBucketCount
// rehashes it and so rewrites that link in every node, and the nodes lie all over the AST's
// memory. After a fork, each page written that way is copied: on a corpus program
// (cpp/graph/bidirectional_dijkstra.cpp) one line after the preamble took 2,447 page faults and
// left 10 MB private to the preamble's checkpoint (docs/checker-benchmark.md). So before a
// fresh session's first fork, while no checkpoint shares its pages, the sets that can grow the
// most get room for half as many nodes again: a rehash is then due only once the program has
// added half as many as the preamble made.
//
// ASTContext and DeclarationNameTable keep the sets private: PrivateMember (privatemember.h)
// reaches them without patching Clang.
// HYDRA_AST_FOLDING_SETS lists ASTContext's sets that grow with C++ code, each with its node
// type: SET for a llvm::FoldingSet, CTX_SET for a llvm::ContextualFoldingSet<T, ASTContext &>.
#define HYDRA_AST_FOLDING_SETS(SET, CTX_SET)                                                    \
  SET(PointerTypes, PointerType)                                                                \
  SET(LValueReferenceTypes, LValueReferenceType)                                                \
  SET(RValueReferenceTypes, RValueReferenceType)                                                \
  SET(MemberPointerTypes, MemberPointerType)                                                    \
  CTX_SET(ConstantArrayTypes, ConstantArrayType)                                                \
  CTX_SET(DependentSizedArrayTypes, DependentSizedArrayType)                                    \
  CTX_SET(FunctionProtoTypes, FunctionProtoType)                                                \
  CTX_SET(DependentDecltypeTypes, DependentDecltypeType)                                        \
  SET(TemplateTypeParmTypes, TemplateTypeParmType)                                              \
  SET(SubstTemplateTypeParmTypes, SubstTemplateTypeParmType)                                    \
  SET(SubstTemplateTypeParmPackTypes, SubstTemplateTypeParmPackType)                            \
  CTX_SET(TemplateSpecializationTypes, TemplateSpecializationType)                              \
  SET(ParenTypes, ParenType)                                                                    \
  SET(UsingTypes, UsingType)                                                                    \
  SET(TypedefTypes, TypedefType)                                                                \
  SET(ElaboratedTypes, ElaboratedType)                                                          \
  SET(DependentNameTypes, DependentNameType)                                                    \
  CTX_SET(DependentTemplateSpecializationTypes, DependentTemplateSpecializationType)            \
  SET(PackExpansionTypes, PackExpansionType)                                                    \
  CTX_SET(AutoTypes, AutoType)                                                                  \
  SET(QualifiedTemplateNames, QualifiedTemplateName)                                            \
  SET(DependentTemplateNames, DependentTemplateName)                                            \
  SET(NestedNameSpecifiers, NestedNameSpecifier)
#define HYDRA_AST_SET(Name, T) HYDRA_PRIVATE_MEMBER(ASTContext, Name, llvm::FoldingSet<T>)
#define HYDRA_AST_CTX_SET(Name, T)                                                              \
  HYDRA_PRIVATE_MEMBER(ASTContext, Name, llvm::ContextualFoldingSet<T, ASTContext &>)
HYDRA_AST_FOLDING_SETS(HYDRA_AST_SET, HYDRA_AST_CTX_SET)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXConstructorNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXDestructorNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)
HYDRA_PRIVATE_MEMBER(DeclarationNameTable, CXXConversionFunctionNames,
                     llvm::FoldingSet<detail::CXXSpecialNameExtra>)

// roomToGrow makes a set take half as many nodes again before it rehashes: it rehashes it now,
// before any fork shares its nodes, if it has less room than that (twice as many buckets then;
// giving every set room to double instead cost more copied bucket pages than it saved, and a
// quarter left a later rehash on the program of the comment above). Small sets are left alone:
// their growth touches few pages.
template <typename Set> void roomToGrow(Set &S) {
  if (S.size() >= 64)
    S.reserve(S.size() + S.size() / 2);
}

// stackLow returns the lowest address of the main thread's stack mapping ([stack] in
// /proc/self/maps), or 0. It reads the file a line at a time into buffers on its own stack
// frame, not the heap: heap pages it wrote would be shared at the fork that follows. Never
// inlined: its 4.6 KB of buffers must not become part of dropDeadStack's frame (see there).
__attribute__((noinline)) uintptr_t stackLow() {
  int Fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return 0;
  char Buf[4096], Line[512];
  size_t Len = 0;
  uintptr_t Low = 0;
  for (ssize_t N; Low == 0 && (N = read(Fd, Buf, sizeof Buf)) > 0;) {
    for (ssize_t I = 0; I < N && Low == 0; I++) {
      if (Buf[I] != '\n') {
        if (Len + 1 < sizeof Line)
          Line[Len++] = Buf[I];
        continue;
      }
      Line[Len] = 0;
      if (Len > 7 && strcmp(Line + Len - 7, "[stack]") == 0)
        Low = strtoull(Line, nullptr, 16);
      Len = 0;
    }
  }
  close(Fd);
  return Low;
}

// gStackLow is the lowest address of the main thread's stack mapping as last seen (0: not
// read yet). A fork copies it, so resumed sessions start from their checkpoint's.
uintptr_t gStackLow = 0;

// currentStackLow returns the lowest address of the main thread's stack mapping, or 0. Reading
// /proc/self/maps costs 0.07-0.2 ms here (the kernel prints a line per mapping, a hundred and
// more with LLVM's libraries), so it is read once; after that, the stack can only have grown
// down, and each page it grew by is found with mincore(), which fails on the first unmapped
// page below it. No other mapping can lie right below the stack: the kernel keeps a guard gap
// of 256 pages there (stack_guard_gap), so the walk never leaves the stack.
__attribute__((noinline)) uintptr_t currentStackLow(uintptr_t Page) {
  if (gStackLow == 0) {
    gStackLow = stackLow();
    return gStackLow;
  }
  unsigned char Resident;
  while (gStackLow > Page && mincore(reinterpret_cast<void *>(gStackLow - Page), Page, &Resident) == 0)
    gStackLow -= Page;
  return gStackLow;
}

} // namespace

// growFoldingSets gives the sets above (and Sema's special-member cache, a public member) room
// to grow by half.
void growFoldingSets(CompilerInstance &CI) {
  if (!CI.hasASTContext())
    return;
  ASTContext &Ctx = CI.getASTContext();
#define HYDRA_GROW(Name, T) roomToGrow(Ctx.*memberOf(Name##Tag{}));
  HYDRA_AST_FOLDING_SETS(HYDRA_GROW, HYDRA_GROW)
#undef HYDRA_GROW
  DeclarationNameTable &Names = Ctx.DeclarationNames;
  roomToGrow(Names.*memberOf(CXXConstructorNamesTag{}));
  roomToGrow(Names.*memberOf(CXXDestructorNamesTag{}));
  roomToGrow(Names.*memberOf(CXXConversionFunctionNamesTag{}));
  if (CI.hasSema())
    roomToGrow(CI.getSema().SpecialMemberCache);
}

// dropDeadStack gives back to the kernel the pages of the main thread's stack below the
// caller's frame: left over from deeper calls (the parser's recursion), dead now. Mapped at a
// fork, each would be shared with the checkpoint and become the checkpoint's private copy when
// the session's next deep call writes it; dropped, that write finds a fresh zero page instead.
// Only the [stack] mapping is touched; nothing is dropped when it is not found.
// The end of what is dropped is one page below the page of this function's frame address, and
// nothing live may lie below it while madvise runs: its own return address must be above it.
// That holds because this frame is a few words: its helpers are never inlined. (Until they
// were marked so, stackLow was inlined here with its buffers, the stack pointer lay 4.6 KB
// below the frame address, and only the compiler's tail call of madvise kept its return
// address out of the dropped pages; without the tail call, a frame address less than 560 bytes
// into its page made madvise return to address 0.)
__attribute__((noinline)) void dropDeadStack() {
  uintptr_t Page = uintptr_t(sysconf(_SC_PAGESIZE));
  uintptr_t Low = currentStackLow(Page);
  // One page of margin below this frame: what the calls from here (madvise, fork) use.
  uintptr_t Here = uintptr_t(__builtin_frame_address(0)) & ~(Page - 1);
  if (Low == 0 || Here < Low + 2 * Page)
    return;
  madvise(reinterpret_cast<void *>(Low), Here - Page - Low, MADV_DONTNEED);
}

} // namespace hydra
