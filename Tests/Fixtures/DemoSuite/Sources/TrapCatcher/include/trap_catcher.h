#ifndef TRAP_CATCHER_H
#define TRAP_CATCHER_H

/// Runs `body(context)`. If it traps (SIGILL or SIGTRAP: a failed Swift `precondition`, `fatalError`, overflow),
/// the process survives and 1 is returned; otherwise 0. This is what signal-handler-based precondition-testing
/// libraries (e.g. CwlPreconditionTesting) do on Linux: the runtime has already printed its
/// `File.swift:N: Precondition failed: …` line on stderr, and the test goes on.
int trap_catcher_run(void (*body)(void *), void *context);

#endif
