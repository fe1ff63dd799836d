// alloc.h: the shim's generational malloc (alloc.cpp).
#pragma once

// hydraNewAllocGeneration starts a new generation: call it just before a checkpoint's fork (and
// in a resumed session just after its fork). Blocks allocated before are never reused nor
// written again by the allocator, so the pages they lie on stay shared with the checkpoint.
void hydraNewAllocGeneration();
