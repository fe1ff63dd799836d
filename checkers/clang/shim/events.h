// events.h: what the shim writes to the driver on its session's channel (events.cpp): the event
// lines of the wire protocol (main.cpp), with descriptors attached where an event carries them.
// Each goes into the shared-memory ring when the driver passed one (ring.h), else on the socket.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <sys/types.h>

namespace hydra {

// gChanFd is the current session channel (-1 in a dormant checkpoint). It is a plain global so
// that the crash handler can reach it.
extern volatile int gChanFd;

// plainWord reports whether S needs no JSON escaping (letters, digits, '_', '-'): the chunk
// categories the driver sends, which both ends then write and read by hand.
bool plainWord(llvm::StringRef S);

// sendObject writes one event line to the channel, with descriptors attached when Fds is not
// empty. If the engine is gone there is nobody to check for, so the process ends.
void sendObject(llvm::json::Object Obj, std::initializer_list<int> Fds = {});

// send is sendObject of the object made of KVs.
void send(std::initializer_list<llvm::json::Object::KV> KVs, std::initializer_list<int> Fds = {});

// sendProgress writes a progress event. With a plain category it prints the line by hand, on the
// stack, byte for byte as llvm::json would (keys sorted; the driver's decodeProgress reads exactly
// this): llvm::json's objects and its sorting allocate on every event, and after a checkpoint's
// fork each allocation that reuses a free heap chunk copies a page out of the checkpoint.
void sendProgress(int64_t Off, const std::string &Cat, int64_t Us, int64_t Faults);

// pidfdOpen returns a pidfd for Pid (-1 on failure). Passed to the driver, it lets the driver
// signal exactly this process, never a later one that reuses its pid.
int pidfdOpen(pid_t Pid);

} // namespace hydra
