// lifeline.h: how a shim process ends with its owner, and how a crash is told (lifeline.cpp).
//
// Processes never outlive their owner: every process polls a "lifeline" pipe (the owner keeps the
// only write end) together with its channel or control socket and exits on hang-up; an active
// session also runs a watchdog thread that does the same (and watches the channel for hang-up)
// while the parser is busy, so a long parse ends with its owner too; the first process gets
// PR_SET_PDEATHSIG from its starter, a resumed session from the dormant checkpoint it forks from.
#pragma once

namespace hydra {

// gLifeline is the read end of the owner's lifeline pipe; hang-up means the owner is gone.
extern int gLifeline;

// startWatchdog starts the watchdog thread of an active session whose channel is Chan.
void startWatchdog(int Chan);

// installCrashHandlers makes a fatal signal (SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE) report a
// crash event on the channel before the process dies by it.
void installCrashHandlers();

} // namespace hydra
