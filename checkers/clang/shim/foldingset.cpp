// foldingset.cpp replaces llvm::FoldingSetBase's insertion, lookup, removal and iteration for
// hydra-clang-shim, so that a node added to a large folding set after a checkpoint's fork does
// not write into the set's bucket array, whose pages the session shares with the checkpoint.
//
// Why: Clang keeps its uniqued types, names and template specializations in llvm::FoldingSets,
// hash tables whose buckets each hold the head of an intrusive chain of nodes. Adding a node
// writes its bucket: one pointer at a place given by the node's hash, so each new type in a
// program after a fork lands on another page of the table, and that page is copied out of the
// checkpoint (a page fault now, and 4 KB more that the checkpoint owns). With
// <bits/stdc++.h> the tables of ASTContext hold tens of thousands of nodes, and folding sets
// were the largest single writer of the pages a heavy program's session copied after its forks
// (docs/checker-benchmark.md, "Bucket heads beside the table").
//
// What: while a set's bucket array lies on pages shared with a checkpoint (allocated before the
// latest fork; alloc.cpp knows), the new head of a bucket goes into Heads, a few small tables
// for the whole process keyed by the bucket's address, instead of into the bucket. Chains keep
// LLVM's shape exactly (a node points to the next, the last one back to its bucket with the low
// bit set), so the head found in Heads, when there is one, stands for the bucket's own; every
// reader below looks there first. Heads is dense, and it writes only pages of its own made
// since the latest fork. A shared array is not rehashed when its set fills (a rehash rewrites
// the link in every node, all over the AST's memory): large sets (kKeepBuckets buckets and
// more) let their chains grow longer instead, small ones still grow.
//
// How it reaches Clang: these are the definitions of FoldingSetBase's out-of-line members, which
// libclang-cpp calls through its PLT; the dynamic linker binds those calls to the executable's
// definitions first (ELF symbol interposition), so Clang's calls come here and libLLVM's copy
// goes unused. Each function follows llvm/lib/Support/FoldingSet.cpp of LLVM 19 line for line,
// with the bucket's head read through headOf. HYDRA_SHIM_PLAIN_FOLDING_SETS=1 keeps every head in
// its bucket, as LLVM does (the comparison of docs/checker-benchmark.md).
#include "foldingset.h"

#include "alloc.h"

#include <llvm/ADT/FoldingSet.h>
#include <llvm/ADT/bit.h>
#include <llvm/Support/ErrorHandling.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

using llvm::FoldingSetBase;
using llvm::FoldingSetIteratorImpl;
using llvm::FoldingSetNode;
using llvm::FoldingSetNodeID;
using Node = FoldingSetBase::Node;

namespace {

// A shared array with at least this many buckets (8 KB) is never rehashed.
constexpr unsigned kKeepBuckets = 1024;

// The helpers of FoldingSet.cpp: a chain's link is either the next node or, with the low bit
// set, its bucket.
Node *nextNode(void *Link) {
  return (reinterpret_cast<intptr_t>(Link) & 1) ? nullptr : static_cast<Node *>(Link);
}
void **bucketOfLink(void *Link) {
  return reinterpret_cast<void **>(reinterpret_cast<intptr_t>(Link) & ~intptr_t(1));
}
void *linkToBucket(void **Bucket) {
  return reinterpret_cast<void *>(reinterpret_cast<intptr_t>(Bucket) | 1);
}
void **bucketFor(unsigned Hash, void **Buckets, unsigned NumBuckets) {
  return Buckets + (Hash & (NumBuckets - 1));
}
void **allocateBuckets(unsigned NumBuckets) {
  auto **Buckets = static_cast<void **>(calloc(NumBuckets + 1, sizeof(void *)));
  if (!Buckets)
    llvm::report_bad_alloc_error("folding set buckets");
  Buckets[NumBuckets] = reinterpret_cast<void *>(-1); // the end marker the iterator stops at
  return Buckets;
}

// Heads maps a bucket's address to the head of its chain, for buckets whose head changed while
// their array was shared. It is a stack of open-addressing tables (linear probing, at most half
// full), newest last; a lookup takes the newest entry for the bucket. Only the newest table is
// written, and only until the next fork: newGeneration freezes it, so that a table shared with
// a checkpoint is never written again (a write would copy its page, and a table written in
// every stretch between forks is a page each checkpoint owns). Before it freezes, a table
// merges into the one below it as long as it holds at least half as many entries, into a new
// block (fresh pages), so the stack stays about log2(forks) deep. Entries are never dropped:
// an array with entries was allocated before a fork, and alloc.cpp never hands such a block
// out again, so a freed array's entries can never be read for another; clear() shadows them.
class Heads {
public:
  // find sets Head to the head stored for Bucket and returns true, or returns false when the
  // bucket holds its own.
  bool find(void **Bucket, void *&Head) const {
    for (int I = Depth - 1; I >= 0; --I)
      if (const Slot *S = Tables[I].find(Bucket)) {
        Head = S->Head;
        return true;
      }
    return false;
  }
  // put stores Head as Bucket's head, in the newest table.
  void put(void **Bucket, void *Head) {
    if (!Open) {
      if (Depth == kMaxDepth)
        mergeTop();
      Tables[Depth++] = Table();
      Open = true;
    }
    Tables[Depth - 1].put(Bucket, Head);
  }
  // clearRange makes every bucket in [Lo, Hi) that has a head here read as empty.
  void clearRange(void **Lo, void **Hi) {
    std::vector<void **> InRange; // put may move the tables: collect first
    for (int I = 0; I < Depth; ++I)
      for (size_t J = 0; J < Tables[I].Cap; ++J) {
        void **B = Tables[I].Slots[J].Bucket;
        if (B && B >= Lo && B < Hi)
          InRange.push_back(B);
      }
    for (void **B : InRange)
      put(B, nullptr);
  }
  // newGeneration freezes the newest table before a fork (see the class comment).
  void newGeneration() {
    Open = false;
    while (Depth >= 2 && Tables[Depth - 1].Used * 2 >= Tables[Depth - 2].Used)
      mergeTop();
  }

private:
  struct Slot {
    void **Bucket;
    void *Head;
  };
  struct Table {
    Slot *Slots = nullptr;
    size_t Cap = 0, Used = 0;

    size_t slotFor(void **Bucket) const {
      return size_t((uintptr_t(Bucket) >> 3) * 0x9E3779B97F4A7C15ull >> 20) & (Cap - 1);
    }
    const Slot *find(void **Bucket) const {
      if (Used == 0)
        return nullptr;
      for (size_t I = slotFor(Bucket);; I = (I + 1) & (Cap - 1)) {
        if (Slots[I].Bucket == Bucket)
          return &Slots[I];
        if (!Slots[I].Bucket)
          return nullptr;
      }
    }
    void put(void **Bucket, void *Head) {
      if (const Slot *S = find(Bucket)) {
        const_cast<Slot *>(S)->Head = Head;
        return;
      }
      if ((Used + 1) * 2 > Cap)
        resize(Cap ? Cap * 2 : 256);
      place(Bucket, Head);
      ++Used;
    }
    void place(void **Bucket, void *Head) {
      size_t I = slotFor(Bucket);
      while (Slots[I].Bucket)
        I = (I + 1) & (Cap - 1);
      Slots[I] = {Bucket, Head};
    }
    void resize(size_t NewCap) {
      Slot *Old = Slots;
      size_t OldCap = Cap;
      Cap = NewCap;
      Slots = static_cast<Slot *>(calloc(Cap, sizeof(Slot)));
      if (!Slots)
        llvm::report_bad_alloc_error("folding set heads");
      for (size_t I = 0; I < OldCap; ++I)
        if (Old[I].Bucket)
          place(Old[I].Bucket, Old[I].Head);
      free(Old);
    }
  };

  // mergeTop merges the newest table into the one below it, in a new block.
  void mergeTop() {
    Table &Lower = Tables[Depth - 2], &Upper = Tables[Depth - 1];
    Table M;
    size_t Need = Lower.Used + Upper.Used;
    M.Cap = 256;
    while (M.Cap < Need * 2)
      M.Cap *= 2;
    M.Slots = static_cast<Slot *>(calloc(M.Cap, sizeof(Slot)));
    if (!M.Slots)
      llvm::report_bad_alloc_error("folding set heads");
    for (const Table *T : {&Lower, &Upper}) // the newer entry wins
      for (size_t I = 0; I < T->Cap; ++I)
        if (T->Slots[I].Bucket)
          M.put(T->Slots[I].Bucket, T->Slots[I].Head);
    free(Lower.Slots);
    free(Upper.Slots);
    Lower = M;
    --Depth;
    Open = false;
  }

  static constexpr int kMaxDepth = 32;
  Table Tables[kMaxDepth];
  int Depth = 0;
  bool Open = false; // whether the newest table may still be written (no fork since it was made)
};

Heads TheHeads;
const bool Plain = getenv("HYDRA_SHIM_PLAIN_FOLDING_SETS") != nullptr;

// headOf is what the bucket at Bucket holds: its head in Heads, if any, else its own.
void *headOf(void **Bucket) {
  void *Head;
  return TheHeads.find(Bucket, Head) ? Head : *Bucket;
}

// setHead changes the head of the bucket at Bucket, where its current head is kept.
void setHead(void **Bucket, void *Head) {
  void *Old;
  if (TheHeads.find(Bucket, Old))
    TheHeads.put(Bucket, Head);
  else
    *Bucket = Head;
}

// shared reports whether a write to the bucket array Buckets would copy a checkpoint's page.
bool shared(void **Buckets) { return !Plain && hydraAllocShared(Buckets); }

} // namespace

void hydraFoldingSetsNewGeneration() { TheHeads.newGeneration(); }

namespace llvm {

void FoldingSetBase::clear() {
  // Only an array shared with a checkpoint can have heads in TheHeads (InsertNode); the scan of
  // every table is skipped for the others.
  if (shared(Buckets))
    TheHeads.clearRange(Buckets, Buckets + NumBuckets);
  memset(Buckets, 0, NumBuckets * sizeof(void *));
  Buckets[NumBuckets] = reinterpret_cast<void *>(-1);
  NumNodes = 0;
}

void FoldingSetBase::GrowBucketCount(unsigned NewBucketCount, const FoldingSetInfo &Info) {
  void **OldBuckets = Buckets;
  unsigned OldNumBuckets = NumBuckets;
  Buckets = allocateBuckets(NewBucketCount);
  NumBuckets = NewBucketCount;
  // Rehash every node into the new array (fresh memory: its heads live in it).
  FoldingSetNodeID TempID;
  for (unsigned I = 0; I != OldNumBuckets; ++I) {
    void *Probe = headOf(OldBuckets + I);
    if (!Probe)
      continue;
    while (Node *N = nextNode(Probe)) {
      Probe = N->getNextInBucket();
      void **Bucket = bucketFor(Info.ComputeNodeHash(this, N, TempID), Buckets, NumBuckets);
      TempID.clear();
      N->SetNextInBucket(*Bucket ? *Bucket : linkToBucket(Bucket));
      *Bucket = N;
    }
  }
  free(OldBuckets); // its heads here stay, unread (see Heads)
}

void FoldingSetBase::GrowHashTable(const FoldingSetInfo &Info) {
  GrowBucketCount(NumBuckets * 2, Info);
}

void FoldingSetBase::reserve(unsigned EltCount, const FoldingSetInfo &Info) {
  if (EltCount < capacity())
    return;
  GrowBucketCount(llvm::bit_floor(EltCount), Info);
}

FoldingSetBase::Node *FoldingSetBase::FindNodeOrInsertPos(const FoldingSetNodeID &ID,
                                                          void *&InsertPos,
                                                          const FoldingSetInfo &Info) {
  unsigned IDHash = ID.ComputeHash();
  void **Bucket = bucketFor(IDHash, Buckets, NumBuckets);
  void *Probe = headOf(Bucket);
  InsertPos = nullptr;
  FoldingSetNodeID TempID;
  while (Node *N = nextNode(Probe)) {
    if (Info.NodeEquals(this, N, ID, IDHash, TempID))
      return N;
    TempID.clear();
    Probe = N->getNextInBucket();
  }
  InsertPos = Bucket;
  return nullptr;
}

void FoldingSetBase::InsertNode(Node *N, void *InsertPos, const FoldingSetInfo &Info) {
  bool Shared = shared(Buckets);
  if (NumNodes + 1 > capacity() && !(Shared && NumBuckets >= kKeepBuckets)) {
    GrowHashTable(Info);
    FoldingSetNodeID TempID;
    InsertPos = bucketFor(Info.ComputeNodeHash(this, N, TempID), Buckets, NumBuckets);
    Shared = false;
  }
  ++NumNodes;
  void **Bucket = static_cast<void **>(InsertPos);
  void *Next = headOf(Bucket);
  N->SetNextInBucket(Next ? Next : linkToBucket(Bucket));
  if (Shared)
    TheHeads.put(Bucket, N);
  else
    setHead(Bucket, N);
}

bool FoldingSetBase::RemoveNode(Node *N) {
  void *Ptr = N->getNextInBucket();
  if (!Ptr)
    return false; // not in a folding set
  --NumNodes;
  N->SetNextInBucket(nullptr);
  void *NodeNextPtr = Ptr;
  // Chase around the circular chain to whatever points to N: a node, or the bucket's head.
  for (;;) {
    if (Node *InBucket = nextNode(Ptr)) {
      Ptr = InBucket->getNextInBucket();
      if (Ptr == N) {
        InBucket->SetNextInBucket(NodeNextPtr);
        return true;
      }
    } else {
      void **Bucket = bucketOfLink(Ptr);
      Ptr = headOf(Bucket);
      if (Ptr == N) {
        setHead(Bucket, NodeNextPtr);
        return true;
      }
    }
  }
}

FoldingSetBase::Node *FoldingSetBase::GetOrInsertNode(Node *N, const FoldingSetInfo &Info) {
  FoldingSetNodeID ID;
  Info.GetNodeProfile(this, N, ID);
  void *IP;
  if (Node *E = FindNodeOrInsertPos(ID, IP, Info))
    return E;
  InsertNode(N, IP, Info);
  return N;
}

// The iterator skips buckets that hold no node (null, or a link back to themselves).
FoldingSetIteratorImpl::FoldingSetIteratorImpl(void **Bucket) {
  void *Head;
  while ((Head = headOf(Bucket)) != reinterpret_cast<void *>(-1) && (!Head || !nextNode(Head)))
    ++Bucket;
  NodePtr = static_cast<FoldingSetNode *>(Head);
}

void FoldingSetIteratorImpl::advance() {
  void *Probe = NodePtr->getNextInBucket();
  if (FoldingSetNode *Next = nextNode(Probe)) {
    NodePtr = Next;
    return;
  }
  void **Bucket = bucketOfLink(Probe);
  void *Head;
  do {
    ++Bucket;
  } while ((Head = headOf(Bucket)) != reinterpret_cast<void *>(-1) && (!Head || !nextNode(Head)));
  NodePtr = static_cast<FoldingSetNode *>(Head);
}

} // namespace llvm
