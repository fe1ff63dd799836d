// alloc.h: the shim's generational malloc (alloc.cpp).
#pragma once

// hydraNewAllocGeneration starts a new generation: call it just before a checkpoint's fork (and
// in a resumed session just after its fork). Blocks allocated before are never reused nor
// written again by the allocator, so the pages they lie on stay shared with the checkpoint.
void hydraNewAllocGeneration();

// hydraAllocShared reports whether Block (the start of a block from malloc) was allocated before
// the latest new generation, so that its pages may be shared with a checkpoint and a write to it
// would copy a page. False for blocks this allocator does not own (HYDRA_SHIM_GLIBC_MALLOC=1).
bool hydraAllocShared(const void *Block);
