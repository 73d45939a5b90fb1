// FanoutObserve: a library preloaded (LD_PRELOAD) into a test process and every process it starts, that writes down
// each path the process names on the file system. Selective testing records those paths as the run-time inputs of
// the test target that ran (docs/selective.md, "What is observed"). Nothing here is called from Swift: the coordinator
// sets LD_PRELOAD and FANOUT_OBSERVE_DIR for a unit, and reads the records afterwards (RunTimeObserver.swift).
//
// The records, one file per process (FANOUT_OBSERVE_DIR/<pid>), each record a kind byte, a path, then a NUL:
//   's' the process started under the library (the path is its executable)
//   'r' a path the process named: opened, looked at, listed, read as a link, made or removed
//   'x' a program the process executed (or tried to)
//   '!' something the library cannot see (a static or set-user-ID program executed, a relative path it could not
//       place): the unit counts as not observed
#ifndef FANOUT_OBSERVE_H
#define FANOUT_OBSERVE_H

/// The record format's version: 1, the records above (PreloadRecords in RunTimeObserver.swift reads them).
int fanout_observe_version(void);

#endif
