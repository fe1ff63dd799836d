// contract.cpp checks the shim's malloc (shim/alloc.cpp, linked in) against what C and C++ ask
// of malloc: sizes and contents kept through realloc, calloc's zeros, alignment, frees of every
// kind, and what the shim adds: after hydraNewAllocGeneration a block of the older generation is
// never handed out again, and a free of it leaves its bytes as they were. It also forks, as a
// checkpoint does, and checks that parent and child go on allocating apart. It prints one line
// per broken promise and exits 1 if there was any; TestAllocatorContract (alloc_test.go) runs it.
#include "../../shim/alloc.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <memory>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

static int Failures = 0;
#define EXPECT(Cond, ...)                                                                          \
  do {                                                                                             \
    if (!(Cond)) {                                                                                 \
      printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #Cond);                                       \
      printf(__VA_ARGS__);                                                                         \
      printf("\n");                                                                                \
      ++Failures;                                                                                  \
    }                                                                                              \
  } while (0)

static void fill(void *P, size_t N, unsigned Seed) {
  auto *B = static_cast<unsigned char *>(P);
  for (size_t I = 0; I < N; ++I)
    B[I] = static_cast<unsigned char>(Seed + I * 7);
}
static bool holds(const void *P, size_t N, unsigned Seed) {
  auto *B = static_cast<const unsigned char *>(P);
  for (size_t I = 0; I < N; ++I)
    if (B[I] != static_cast<unsigned char>(Seed + I * 7))
      return false;
  return true;
}

int main() {
  // Sizes across the small classes and into the large blocks, kept apart and intact.
  std::vector<std::pair<void *, size_t>> Live;
  for (size_t N : {0ul, 1ul, 15ul, 16ul, 17ul, 100ul, 128ul, 129ul, 1000ul, 4096ul, 65536ul,
                   65537ul, 300000ul, 5000000ul}) {
    void *P = malloc(N);
    EXPECT(P != nullptr, "malloc(%zu)", N);
    EXPECT(uintptr_t(P) % 16 == 0, "malloc(%zu) = %p, not 16-byte aligned", N, P);
    EXPECT(malloc_usable_size(P) >= N, "usable %zu < %zu", malloc_usable_size(P), N);
    fill(P, N, unsigned(N));
    Live.push_back({P, N});
  }
  for (auto &[P, N] : Live)
    EXPECT(holds(P, N, unsigned(N)), "block of %zu overwritten", N);

  // realloc keeps the contents, growing and shrinking, small and large.
  void *R = malloc(10);
  fill(R, 10, 3);
  for (size_t N : {20ul, 200ul, 70000ul, 3000000ul, 50ul, 8ul}) {
    size_t Keep = N < 10 ? N : 10;
    R = realloc(R, N);
    EXPECT(R && holds(R, Keep, 3), "realloc to %zu lost the contents", N);
  }
  free(R);

  // calloc gives zeros, also on a block that was used and freed before.
  for (int Round = 0; Round < 2; ++Round)
    for (size_t N : {24ul, 4000ul, 100000ul}) {
      auto *C = static_cast<unsigned char *>(calloc(N, 1));
      bool Zero = true;
      for (size_t I = 0; I < N; ++I)
        Zero = Zero && C[I] == 0;
      EXPECT(Zero, "calloc(%zu, 1), round %d, not zero", N, Round);
      memset(C, 0xab, N);
      free(C);
    }
  // Through volatile, lest the compiler fold an unused allocation and its null check away.
  void *volatile Refused = calloc(SIZE_MAX / 2, 4);
  EXPECT(Refused == nullptr, "calloc overflow not refused");
  Refused = malloc(SIZE_MAX - 1);
  EXPECT(Refused == nullptr, "malloc of more than the address space not refused");

  // Aligned allocations of every kind, freed with free.
  for (size_t A : {8ul, 16ul, 32ul, 64ul, 4096ul, 65536ul}) {
    void *P = aligned_alloc(A, 3 * A);
    EXPECT(P && uintptr_t(P) % A == 0, "aligned_alloc(%zu) = %p", A, P);
    fill(P, 3 * A, 9);
    EXPECT(malloc_usable_size(P) >= 3 * A, "usable of aligned %zu", A);
    void *Q = nullptr;
    EXPECT(posix_memalign(&Q, A, 100) == 0 && uintptr_t(Q) % A == 0, "posix_memalign(%zu)", A);
    void *M = memalign(A, 1);
    EXPECT(M && uintptr_t(M) % A == 0, "memalign(%zu)", A);
    EXPECT(holds(P, 3 * A, 9), "aligned block of %zu overwritten", A);
    free(P);
    free(Q);
    free(M);
  }
  struct alignas(128) Wide {
    char C[128];
  };
  auto W = std::make_unique<Wide>();
  EXPECT(uintptr_t(W.get()) % 128 == 0, "new of an over-aligned type at %p", (void *)W.get());

  // Within a generation a freed block is handed out again; after a new generation it is not,
  // and a free of an older block leaves its bytes alone.
  void *A1 = malloc(48);
  free(A1);
  void *A2 = malloc(48);
  EXPECT(A2 == A1, "a freed block of this generation was not reused (%p, then %p)", A1, A2);
  void *Old = malloc(48), *OldFreed = malloc(48);
  fill(Old, 48, 5);
  free(OldFreed);
  hydraNewAllocGeneration();
  for (int I = 0; I < 100; ++I) {
    void *N = malloc(48);
    EXPECT(N != OldFreed, "block %p of the older generation handed out again", OldFreed);
    free(N);
  }
  free(Old);
  EXPECT(holds(Old, 48, 5), "free of an older block wrote into it");

  // Strings and containers, as Clang uses them, across generations.
  std::vector<std::string> Words;
  for (int I = 0; I < 20000; ++I) {
    Words.push_back(std::string(size_t(I % 50), char('a' + I % 26)));
    if (I % 1000 == 0)
      hydraNewAllocGeneration();
  }
  for (int I = 0; I < 20000; ++I)
    EXPECT(Words[size_t(I)] == std::string(size_t(I % 50), char('a' + I % 26)), "word %d", I);

  // A fork, as a checkpoint: both sides allocate on, apart, and the old blocks hold.
  hydraNewAllocGeneration();
  pid_t Pid = fork();
  if (Pid == 0) {
    int Bad = 0;
    for (int I = 0; I < 1000; ++I) {
      void *P = malloc(size_t(I % 300 + 1));
      fill(P, size_t(I % 300 + 1), 1);
      Bad += !holds(P, size_t(I % 300 + 1), 1);
    }
    for (auto &[P, N] : Live)
      Bad += !holds(P, N, unsigned(N));
    _exit(Bad ? 1 : 0);
  }
  for (int I = 0; I < 1000; ++I)
    free(malloc(size_t(I % 300 + 1)));
  int Status = 0;
  waitpid(Pid, &Status, 0);
  EXPECT(WIFEXITED(Status) && WEXITSTATUS(Status) == 0, "the forked child saw broken blocks");
  for (auto &[P, N] : Live) {
    EXPECT(holds(P, N, unsigned(N)), "block of %zu overwritten after the fork", N);
    free(P);
  }

  if (Failures == 0)
    printf("ok\n");
  return Failures ? 1 : 0;
}
