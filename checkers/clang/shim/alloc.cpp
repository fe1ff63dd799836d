// alloc.cpp replaces malloc for hydra-clang-shim with a generational allocator, so that after a
// checkpoint's fork the session writes new objects into fresh pages instead of into free chunks
// on pages it shares with the checkpoint.
//
// Why: after a fork every page of the session is shared copy-on-write with the dormant
// checkpoint, and the first write to one copies it (a page fault, and the old page becomes the
// checkpoint's own memory). glibc's malloc hands out the most recently freed chunks first, and
// those lie on old pages all over the heap, so every allocation after a fork can copy a page;
// freeing an old chunk writes list links into it and copies its page too. Here, each fork starts
// a new generation: blocks allocated before it are never reused nor written again (a free of one
// is dropped), and new blocks come from untouched address space, packed densely.
// docs/checker-benchmark.md ("A generational malloc") measures it; HYDRA_SHIM_GLIBC_MALLOC=1
// hands every call to glibc's malloc instead, for that comparison.
//
// glibc supports replacing malloc this way (its manual, "Replacing malloc": define malloc, free,
// calloc, realloc, and the aligned and size functions in the program); every library's calls,
// libc's own included, then come here. Layout: one range of address space reserved up front;
// small blocks (size classes up to kMaxSmall) are bumped from its first part, each behind a
// 16-byte header; large ones take whole pages from its second part. A pointer outside the range
// (glibc's, when this allocator is off or the range is spent) goes back to glibc.
#include "alloc.h"

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
void *__libc_malloc(size_t);
void __libc_free(void *);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
extern char **environ;
}

namespace {

constexpr size_t kSmallRange = size_t(8) << 30; // address space for small blocks
constexpr size_t kLargeRange = size_t(8) << 30; // and for large ones
constexpr size_t kMaxSmall = 64 * 1024;
constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t(2) << 20; // x86-64's transparent huge page
constexpr size_t kAlign = 16;
constexpr uint32_t kLarge = 0xffff, kAligned = 0xfffe; // Header::Class of the special kinds

// Header precedes every block: its size class (or kind), the generation that allocated it, and
// its usable size (large blocks: the pages mapped; aligned: the offset back to the real block).
struct Header {
  uint32_t Class;
  uint32_t Gen;
  uint64_t Size;
};
static_assert(sizeof(Header) == kAlign, "a header keeps the block 16-byte aligned");

// Size classes: 16-byte steps to 128, then four steps per doubling up to kMaxSmall.
constexpr int kClasses = 8 + 4 * 9;
size_t classSize(int C) {
  if (C < 8)
    return size_t(C + 1) * 16;
  int Doubling = (C - 8) / 4, Step = (C - 8) % 4;
  size_t Base = size_t(128) << Doubling;
  return Base + size_t(Step + 1) * (Base / 4);
}
// classOf is the smallest class that holds N bytes (N <= kMaxSmall), worked out rather than
// searched: it runs on every malloc. Above 128, N lies in (B, 2B] for B = 128 << Doubling, and
// that doubling's four classes end at B + B/4, B + B/2, B + 3B/4 and 2B.
int classOf(size_t N) {
  if (N <= 128)
    return N == 0 ? 0 : int((N - 1) / 16);
  int Doubling = 63 - __builtin_clzll((N - 1) >> 7);
  size_t Base = size_t(128) << Doubling;
  return 8 + 4 * Doubling + int((N - Base - 1) / (Base / 4));
}

struct State {
  std::atomic_flag Lock = ATOMIC_FLAG_INIT;
  int Mode = -1; // -1 not decided yet, 0 glibc, 1 this allocator
  char *Base = nullptr, *SmallNext = nullptr, *SmallEnd = nullptr;
  char *LargeNext = nullptr, *LargeEnd = nullptr;
  uint32_t Gen = 1;
  void *Free[kClasses] = {}; // blocks of this generation, freed: a list through their first word
  void *LargeFree = nullptr;  // large blocks of this generation, freed: the same kind of list
  bool HugePagesAfterFork = false; // HYDRA_SHIM_HUGE_PAGES_AFTER_FORK: keep asking for them
} S;

// lock and unlock guard S (a spin lock: the shim's only other thread, the watchdog, does not
// allocate once started); Guard holds it for a scope, and around a fork pthread_atfork does.
void lock() {
  while (S.Lock.test_and_set(std::memory_order_acquire))
    __builtin_ia32_pause();
}
void unlock() { S.Lock.clear(std::memory_order_release); }

struct Guard {
  Guard() { lock(); }
  ~Guard() { unlock(); }
};

// on decides, once the environment can be read, whether this allocator serves the process.
bool on() {
  if (S.Mode >= 0)
    return S.Mode == 1;
  if (!environ)
    return false; // too early to tell: glibc serves these first calls
  S.Mode = getenv("HYDRA_SHIM_GLIBC_MALLOC") ? 0 : 1;
  if (S.Mode == 1) {
    void *P = mmap(nullptr, kSmallRange + kLargeRange, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (P == MAP_FAILED) {
      S.Mode = 0;
      return false;
    }
    // Transparent huge pages where the kernel can give them (as glibc.malloc.hugetlb=1 asks of
    // glibc's heap, checkers/clang/clang.go): fewer page-table entries make every fork faster,
    // and a write to a shared huge page after a fork splits it and copies 4 KB, not 2 MB. Only
    // until the first fork: see hydraNewAllocGeneration.
    madvise(P, kSmallRange + kLargeRange, MADV_HUGEPAGE);
    S.HugePagesAfterFork = getenv("HYDRA_SHIM_HUGE_PAGES_AFTER_FORK") != nullptr;
    S.Base = S.SmallNext = static_cast<char *>(P);
    S.SmallEnd = S.LargeNext = S.Base + kSmallRange;
    S.LargeEnd = S.LargeNext + kLargeRange;
  }
  return S.Mode == 1;
}

bool ours(const void *P) {
  return S.Base && P >= S.Base && static_cast<const char *>(P) < S.LargeEnd;
}

Header *headerOf(void *P) { return static_cast<Header *>(P) - 1; }

// allocLocked returns a block of at least N usable bytes, or nullptr when the range is spent;
// Fresh says whether it comes from untouched address space (all zero).
void *allocLocked(size_t N, bool &Fresh) {
  Fresh = true;
  if (N > kMaxSmall) {
    // A freed large block of this generation that fits without wasting more than half.
    for (void **Link = &S.LargeFree; *Link; Link = static_cast<void **>(*Link)) {
      void *P = *Link;
      size_t Have = headerOf(P)->Size;
      if (Have >= N && Have / 2 <= N) {
        memcpy(Link, P, sizeof(void *));
        Fresh = false;
        return P;
      }
    }
    size_t Len = (N + sizeof(Header) + kPage - 1) & ~(kPage - 1);
    if (Len < N || size_t(S.LargeEnd - S.LargeNext) < Len)
      return nullptr;
    auto *H = reinterpret_cast<Header *>(S.LargeNext);
    S.LargeNext += Len;
    *H = {kLarge, S.Gen, Len - sizeof(Header)};
    return H + 1;
  }
  int C = classOf(N);
  if (void *P = S.Free[C]) {
    memcpy(&S.Free[C], P, sizeof(void *));
    Fresh = false;
    return P;
  }
  size_t Len = sizeof(Header) + classSize(C);
  if (size_t(S.SmallEnd - S.SmallNext) < Len)
    return nullptr;
  auto *H = reinterpret_cast<Header *>(S.SmallNext);
  S.SmallNext += Len;
  *H = {uint32_t(C), S.Gen, classSize(C)};
  return H + 1;
}

// freeLocked takes back one of our blocks. A block of an earlier generation is left as it is:
// its page may be shared with a checkpoint, and writing a list link into it would copy it.
void freeLocked(void *P) {
  Header *H = headerOf(P);
  if (H->Class == kAligned) {
    freeLocked(static_cast<char *>(P) - H->Size);
    return;
  }
  if (H->Gen != S.Gen)
    return;
  void *&List = H->Class == kLarge ? S.LargeFree : S.Free[H->Class];
  memcpy(P, &List, sizeof(void *));
  List = P;
}

size_t usableSize(void *P) {
  Header *H = headerOf(P);
  if (H->Class == kAligned)
    return headerOf(static_cast<char *>(P) - H->Size)->Size - H->Size;
  return H->Size;
}

void *alignedAlloc(size_t Align, size_t N) {
  if (Align <= kAlign)
    return malloc(N);
  if (!on())
    return __libc_memalign(Align, N);
  // A block with room to move the pointer to the alignment, and a second header just before
  // the aligned pointer saying how far back the block starts.
  if (N + Align + sizeof(Header) < N)
    return nullptr;
  char *Raw = static_cast<char *>(malloc(N + Align + sizeof(Header)));
  if (!Raw)
    return nullptr;
  if (!ours(Raw)) { // the range is spent: glibc's block, so let glibc align it
    __libc_free(Raw);
    return __libc_memalign(Align, N);
  }
  uintptr_t A = (uintptr_t(Raw) + sizeof(Header) + Align - 1) & ~uintptr_t(Align - 1);
  auto *H = reinterpret_cast<Header *>(A) - 1;
  *H = {kAligned, S.Gen, uint64_t(A - uintptr_t(Raw))};
  return reinterpret_cast<void *>(A);
}

[[maybe_unused]] int AtFork = pthread_atfork(lock, unlock, unlock);

// dropPages gives back to the kernel the whole pages inside [P, P + N).
void dropPages(void *P, size_t N) {
  uintptr_t Lo = (uintptr_t(P) + kPage - 1) & ~(kPage - 1), Hi = (uintptr_t(P) + N) & ~(kPage - 1);
  if (Hi > Lo)
    madvise(reinterpret_cast<void *>(Lo), Hi - Lo, MADV_DONTNEED);
}

} // namespace

void hydraNewAllocGeneration() {
  Guard G;
  ++S.Gen;
  // The free blocks are never handed out again (their pages may be shared with a checkpoint):
  // the whole pages inside them go back to the kernel now, before the fork would share them,
  // and the lists start empty.
  for (int C = 0; C < kClasses; ++C) {
    for (void *P = S.Free[C], *Next; P && classSize(C) >= 2 * kPage; P = Next) {
      memcpy(&Next, P, sizeof(void *));
      dropPages(P, classSize(C));
    }
    S.Free[C] = nullptr;
  }
  for (void *P = S.LargeFree, *Next; P; P = Next) {
    memcpy(&Next, P, sizeof(void *));
    dropPages(headerOf(P), headerOf(P)->Size + sizeof(Header));
  }
  S.LargeFree = nullptr;
  // The untouched rest of the huge page that new blocks come from: mapped (as zeros) with it, it
  // would be shared at the fork, and the session's next blocks would copy it page by page out of
  // the checkpoint. Dropped, those blocks get fresh pages of their own.
  for (char *Next : {S.SmallNext, S.LargeNext}) {
    uintptr_t End = (uintptr_t(Next) + kHugePage - 1) & ~(kHugePage - 1);
    dropPages(Next, End - uintptr_t(Next));
  }
  // From the first fork on (the preamble's checkpoint), no more huge pages: the session then
  // grows by a few megabytes over a whole program, so they save the forks little, and the first
  // write into each new one zeroes 2 MB inside one line (0.2 ms where the memory is already
  // backed, 2.3 ms in a virtual machine whose host backs guest memory lazily:
  // docs/checker-benchmark.md, "Huge pages until the first fork"). The huge pages already
  // mapped stay; and khugepaged, which skips such a mapping, will not collapse pages shared
  // with a checkpoint into new copies.
  if (S.Base && S.Gen == 2 && !S.HugePagesAfterFork)
    madvise(S.Base, kSmallRange + kLargeRange, MADV_NOHUGEPAGE);
}

bool hydraAllocShared(const void *Block) {
  if (!Block || !ours(Block))
    return false;
  Header *H = headerOf(const_cast<void *>(Block));
  if (H->Class == kAligned)
    H = headerOf(static_cast<char *>(const_cast<void *>(Block)) - H->Size);
  return H->Gen != S.Gen;
}

extern "C" {

// allocOrGlibc is malloc that also says whether the block is known to be all zero.
static void *allocOrGlibc(size_t N, bool &Fresh) {
  Fresh = false;
  if (!on())
    return __libc_malloc(N);
  void *P;
  {
    Guard G;
    P = allocLocked(N, Fresh);
  }
  return P ? P : __libc_malloc(N);
}

void *malloc(size_t N) {
  bool Fresh;
  return allocOrGlibc(N, Fresh);
}

void free(void *P) {
  if (!P)
    return;
  if (!ours(P)) {
    __libc_free(P);
    return;
  }
  Guard G;
  freeLocked(P);
}

void *calloc(size_t Count, size_t Size) {
  size_t N;
  if (__builtin_mul_overflow(Count, Size, &N)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!on())
    return __libc_calloc(Count, Size);
  bool Fresh;
  void *P = allocOrGlibc(N, Fresh);
  if (!P || Fresh)
    return P; // untouched address space reads as zero: no need to touch its pages
  if (!ours(P)) {
    free(P);
    return __libc_calloc(Count, Size);
  }
  memset(P, 0, N);
  return P;
}

void *realloc(void *P, size_t N) {
  if (!P)
    return malloc(N);
  if (!ours(P))
    return __libc_realloc(P, N);
  if (N == 0) {
    free(P);
    return nullptr;
  }
  size_t Have = usableSize(P);
  if (N <= Have && (N > Have / 2 || Have <= 128))
    return P;
  void *Q = malloc(N);
  if (!Q)
    return nullptr;
  memcpy(Q, P, N < Have ? N : Have);
  free(P);
  return Q;
}

void *memalign(size_t Align, size_t N) { return alignedAlloc(Align, N); }
void *aligned_alloc(size_t Align, size_t N) { return alignedAlloc(Align, N); }
int posix_memalign(void **Out, size_t Align, size_t N) {
  if (Align < sizeof(void *) || (Align & (Align - 1)))
    return EINVAL;
  void *P = alignedAlloc(Align, N);
  if (!P)
    return ENOMEM;
  *Out = P;
  return 0;
}
void *valloc(size_t N) { return alignedAlloc(kPage, N); }
void *pvalloc(size_t N) { return alignedAlloc(kPage, (N + kPage - 1) & ~(kPage - 1)); }

size_t malloc_usable_size(void *P) {
  if (!P)
    return 0;
  if (!ours(P)) {
    // glibc's block: ask glibc's own (a weak symbol this one overrides, found past it).
    using Fn = size_t (*)(void *);
    static Fn Glibc = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
    return Glibc ? Glibc(P) : 0;
  }
  return usableSize(P);
}

} // extern "C"
