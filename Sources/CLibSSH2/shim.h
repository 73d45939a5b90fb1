#ifndef FANOUT_CLIBSSH2_SHIM_H
#define FANOUT_CLIBSSH2_SHIM_H

#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <openssl/crypto.h>

/// Tells OpenSSL (libssh2's crypto backend) not to register its clean-up with atexit(). Without this, exit() frees
/// libcrypto's locks while an SSH I/O thread may still be tearing its session down (channel_free draws random bytes):
/// a crash at exit, seen once in 15 `fanout agents check` runs against 32 agents. Call it before libssh2_init.
static inline int fanout_crypto_init_without_atexit(void) {
    return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL);
}

// libssh2's function-like macros are not imported into Swift: static inline wrappers stand in for them.
// Constants that are expressions (LIBSSH2_CHANNEL_WINDOW_DEFAULT is `(2*1024*1024)`) are not imported either:
// they are restated here as typed constants.

static const unsigned int FANOUT_CHANNEL_WINDOW_DEFAULT = LIBSSH2_CHANNEL_WINDOW_DEFAULT;
static const unsigned int FANOUT_CHANNEL_PACKET_DEFAULT = LIBSSH2_CHANNEL_PACKET_DEFAULT;

/// libssh2_session_init() with an abstract pointer that the I/O callbacks receive.
static inline LIBSSH2_SESSION *fanout_session_init(void *abstract) {
    return libssh2_session_init_ex(NULL, NULL, NULL, abstract);
}

/// Installs the send/recv callbacks (libssh2_session_callback_set takes `void *`, which Swift cannot form
/// from a C function pointer without an unsafe cast).
static inline void fanout_session_set_io_callbacks(LIBSSH2_SESSION *session,
                                                   LIBSSH2_RECV_FUNC((*recv_cb)),
                                                   LIBSSH2_SEND_FUNC((*send_cb))) {
    libssh2_session_callback_set(session, LIBSSH2_CALLBACK_RECV, (void *)recv_cb);
    libssh2_session_callback_set(session, LIBSSH2_CALLBACK_SEND, (void *)send_cb);
}

/// libssh2_channel_open_session()
static inline LIBSSH2_CHANNEL *fanout_channel_open_session(LIBSSH2_SESSION *session) {
    return libssh2_channel_open_ex(session, "session", sizeof("session") - 1,
                                   LIBSSH2_CHANNEL_WINDOW_DEFAULT, LIBSSH2_CHANNEL_PACKET_DEFAULT, NULL, 0);
}

/// libssh2_channel_exec()
static inline int fanout_channel_exec(LIBSSH2_CHANNEL *channel, const char *command) {
    return libssh2_channel_process_startup(channel, "exec", sizeof("exec") - 1,
                                           command, (unsigned int)strlen(command));
}

/// libssh2_channel_read() / libssh2_channel_read_stderr()
static inline ssize_t fanout_channel_read(LIBSSH2_CHANNEL *channel, int stream_id, void *buffer, size_t length) {
    return libssh2_channel_read_ex(channel, stream_id, (char *)buffer, length);
}

/// libssh2_session_disconnect()
static inline int fanout_session_disconnect(LIBSSH2_SESSION *session, const char *description) {
    return libssh2_session_disconnect_ex(session, SSH_DISCONNECT_BY_APPLICATION, description, "");
}

/// libssh2_sftp_open() for writing.
static inline LIBSSH2_SFTP_HANDLE *fanout_sftp_open(LIBSSH2_SFTP *sftp, const char *path,
                                                    unsigned long flags, long mode) {
    return libssh2_sftp_open_ex(sftp, path, (unsigned int)strlen(path), flags, mode, LIBSSH2_SFTP_OPENFILE);
}

/// libssh2_sftp_mkdir()
static inline int fanout_sftp_mkdir(LIBSSH2_SFTP *sftp, const char *path, long mode) {
    return libssh2_sftp_mkdir_ex(sftp, path, (unsigned int)strlen(path), mode);
}

/// libssh2_sftp_rename() (SFTP v3 as served by OpenSSH: fails when the target exists; the flags are ignored)
static inline int fanout_sftp_rename(LIBSSH2_SFTP *sftp, const char *from, const char *to) {
    return libssh2_sftp_rename_ex(sftp, from, (unsigned int)strlen(from), to, (unsigned int)strlen(to),
                                  LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC |
                                  LIBSSH2_SFTP_RENAME_NATIVE);
}

/// libssh2_sftp_unlink()
static inline int fanout_sftp_unlink(LIBSSH2_SFTP *sftp, const char *path) {
    return libssh2_sftp_unlink_ex(sftp, path, (unsigned int)strlen(path));
}

/// libssh2_sftp_stat()
static inline int fanout_sftp_stat(LIBSSH2_SFTP *sftp, const char *path, LIBSSH2_SFTP_ATTRIBUTES *attrs) {
    return libssh2_sftp_stat_ex(sftp, path, (unsigned int)strlen(path), LIBSSH2_SFTP_STAT, attrs);
}

/// POLLRDHUP (peer shut down its side) needs _GNU_SOURCE, which Swift's Glibc module does not define.
static const short FANOUT_POLLRDHUP = 0x2000;

/// The wake-up descriptor of a connection's I/O thread (sys/eventfd.h is not exported by Swift's Glibc module).
static inline int fanout_eventfd(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

/// TCP_NODELAY (commands are small, latency-bound packets) and TCP_USER_TIMEOUT (the kernel gives up on data
/// that stays unacknowledged this long). Returns 0, or -1 with errno set.
static inline int fanout_tune_tcp_socket(int fd, unsigned int user_timeout_ms) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return -1;
    return setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

/// TCP_QUICKACK: acknowledge received data at once instead of up to 40 ms later (Linux re-enables delayed ACKs
/// by itself, so it is set again after reads).
static inline void fanout_quickack(int fd) {
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

#endif
