#ifndef FANOUT_CLIBSSH2_SHIM_H
#define FANOUT_CLIBSSH2_SHIM_H

#include <libssh2.h>
#include <libssh2_sftp.h>

// libssh2's function-like macros are not imported into Swift: static inline wrappers stand in for them.
// (The helper that owns FanoutSSH adds the ones it needs here.)

#endif
