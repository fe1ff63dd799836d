// foldingset.h: the shim's replacement of llvm::FoldingSetBase's bucket writes (foldingset.cpp).
#pragma once

// hydraFoldingSetsNewGeneration freezes the bucket heads written so far: call it with
// hydraNewAllocGeneration, just before a checkpoint's fork (and in a resumed session just after
// its fork), so that the session never writes the heads' pages it shares with a checkpoint.
void hydraFoldingSetsNewGeneration();
