#ifndef FANOUT_CLIBSSH2_SHIM_H
#define FANOUT_CLIBSSH2_SHIM_H

#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <dlfcn.h>
#include <sys/socket.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <libssh2.h>
#include <libssh2_sftp.h>

/// Tells OpenSSL (libssh2's crypto backend) not to register its clean-up with atexit(). Without this, exit() frees
/// libcrypto's locks while an SSH I/O thread may still be tearing its session down (channel_free draws random bytes):
/// a crash at exit, seen once in 15 `fanout agents check` runs against 32 agents. Call it before libssh2_init.
///
/// Looked up at run time in the libcrypto that libssh2 loaded, rather than linked: on macOS Homebrew's libcrypto is
/// not on the linker's default search path (libssh2's pkg-config file gives only its own -L), and a libssh2 built on
/// another crypto backend simply has none (returns 0 then). OPENSSL_INIT_NO_ATEXIT is 0x00080000L since OpenSSL
/// 1.1.1b; stated here so that no OpenSSL headers are needed to build.
static inline int fanout_crypto_init_without_atexit(void) {
    typedef int (*fanout_openssl_init_crypto)(uint64_t options, const void *settings);
#if defined(RTLD_DEFAULT)
    void *symbol = dlsym(RTLD_DEFAULT, "OPENSSL_init_crypto");
#else
    void *symbol = dlsym(NULL, "OPENSSL_init_crypto"); // glibc without _GNU_SOURCE: RTLD_DEFAULT is NULL
#endif
    if (symbol == NULL) return 0;
    return ((fanout_openssl_init_crypto)symbol)(0x00080000L, NULL);
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

// Sockets and the I/O thread's wake-up: what differs between Linux and Darwin (macOS) stays in this header, so the
// Swift side reads the same on both.

/// POLLRDHUP (peer shut down its side) needs _GNU_SOURCE, which Swift's Glibc module does not define. Darwin has no
/// such event (its poll reports the peer's shutdown as POLLHUP/POLLIN): 0 there.
#if defined(__linux__)
static const short FANOUT_POLLRDHUP = 0x2000;
#else
static const short FANOUT_POLLRDHUP = 0;
#endif

/// SOCK_STREAM as an int (glibc's is an enum constant in Swift, Darwin's an Int32).
static const int FANOUT_SOCK_STREAM = SOCK_STREAM;

/// Darwin has no MSG_NOSIGNAL: there a socket asks for the same (EPIPE instead of SIGPIPE) with SO_NOSIGPIPE, set
/// once on the socket. Returns 0, or -1 with errno set. Nothing to do on Linux, where every send says MSG_NOSIGNAL.
static inline int fanout_forbid_sigpipe(int fd) {
#if defined(SO_NOSIGPIPE)
    int one = 1;
    return setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#else
    (void)fd;
    return 0;
#endif
}

/// send() that never raises SIGPIPE: MSG_NOSIGNAL on Linux; on Darwin the socket must carry SO_NOSIGPIPE
/// (`fanout_forbid_sigpipe`).
static inline ssize_t fanout_send(int fd, const void *buffer, size_t length, int flags) {
#if defined(MSG_NOSIGNAL)
    flags |= MSG_NOSIGNAL;
#endif
    return send(fd, buffer, length, flags);
}

/// A non-blocking, close-on-exec TCP socket of `family` that never raises SIGPIPE. Linux sets the flags atomically;
/// Darwin (no SOCK_NONBLOCK / SOCK_CLOEXEC) right after socket(). That leaves a moment in which a child spawned by
/// another thread could inherit the socket: Fanout's own spawns on Darwin use POSIX_SPAWN_CLOEXEC_DEFAULT, which
/// inherits nothing not asked for. Returns the descriptor, or -1 with errno set.
static inline int fanout_tcp_socket(int family) {
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    int flags = fcntl(fd, F_GETFL);
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0
        || fanout_forbid_sigpipe(fd) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
#endif
}

/// The wake-up signal of a connection's I/O thread: `fds[0]` is polled for POLLIN, `fds[1]` is written to wake it.
/// Linux: one eventfd serves as both (sys/eventfd.h is not exported by Swift's Glibc module). Elsewhere: a
/// non-blocking, close-on-exec pipe. Returns 0, or -1 with errno set (and both descriptors -1).
static inline int fanout_wakeup_open(int fds[2]) {
    fds[0] = fds[1] = -1;
#if defined(__linux__)
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) return -1;
    fds[0] = fds[1] = fd;
    return 0;
#else
    int p[2];
    if (pipe(p) != 0) return -1;
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(p[i], F_GETFL);
        if (fcntl(p[i], F_SETFD, FD_CLOEXEC) != 0 || flags < 0 || fcntl(p[i], F_SETFL, flags | O_NONBLOCK) != 0) {
            int saved = errno;
            close(p[0]);
            close(p[1]);
            errno = saved;
            return -1;
        }
    }
    fds[0] = p[0];
    fds[1] = p[1];
    return 0;
#endif
}

/// Wakes the poll() on fds[0]. A full pipe (EAGAIN) is fine: the reader has a wake-up pending already.
static inline void fanout_wakeup_signal(int write_fd) {
#if defined(__linux__)
    uint64_t one = 1;
    (void)write(write_fd, &one, sizeof(one));
#else
    char byte = 1;
    (void)write(write_fd, &byte, 1);
#endif
}

/// Consumes every pending wake-up, so the next poll() sleeps until the next signal.
static inline void fanout_wakeup_drain(int read_fd) {
#if defined(__linux__)
    uint64_t value;
    (void)read(read_fd, &value, sizeof(value)); // one read resets an eventfd's counter
#else
    char buffer[256];
    while (read(read_fd, buffer, sizeof(buffer)) > 0) {}
#endif
}

/// Closes what fanout_wakeup_open opened (one descriptor on Linux, two elsewhere).
static inline void fanout_wakeup_close(int fds[2]) {
    if (fds[0] >= 0) close(fds[0]);
    if (fds[1] >= 0 && fds[1] != fds[0]) close(fds[1]);
    fds[0] = fds[1] = -1;
}

/// TCP_NODELAY (commands are small, latency-bound packets), and a bound on how long the kernel keeps retransmitting
/// data that stays unacknowledged: TCP_USER_TIMEOUT (ms) on Linux, TCP_RXT_CONNDROPTIME (whole seconds) on Darwin.
/// Fanout's own dead-peer check (keepalives) is the main defence; this is the kernel's backstop.
/// Returns 0, or -1 with errno set.
static inline int fanout_tune_tcp_socket(int fd, unsigned int user_timeout_ms) {
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) return -1;
#if defined(TCP_USER_TIMEOUT)
    return setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
#elif defined(TCP_RXT_CONNDROPTIME)
    int seconds = (int)((user_timeout_ms + 999) / 1000);
    return setsockopt(fd, IPPROTO_TCP, TCP_RXT_CONNDROPTIME, &seconds, sizeof(seconds));
#else
    (void)user_timeout_ms;
    return 0;
#endif
}

/// TCP_QUICKACK: acknowledge received data at once instead of up to 40 ms later (Linux re-enables delayed ACKs
/// by itself, so it is set again after reads). Darwin has no per-socket equivalent: nothing happens there.
static inline void fanout_quickack(int fd) {
#if defined(TCP_QUICKACK)
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
#else
    (void)fd;
#endif
}

/// A connected pair of non-blocking, close-on-exec stream sockets that never raise SIGPIPE: the two ends of a
/// ProxyJump tunnel. One end is the socket of the session to the agent behind the bastion; the I/O thread of the
/// bastion's connection pumps the other end into a direct-tcpip channel. Returns 0, or -1 with errno set.
static inline int fanout_stream_socketpair(int fds[2]) {
    fds[0] = fds[1] = -1;
#if defined(SOCK_NONBLOCK) && defined(SOCK_CLOEXEC)
    return socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds);
#else
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return -1;
    for (int i = 0; i < 2; i++) {
        int flags = fcntl(fds[i], F_GETFL);
        if (fcntl(fds[i], F_SETFD, FD_CLOEXEC) != 0 || flags < 0 || fcntl(fds[i], F_SETFL, flags | O_NONBLOCK) != 0
            || fanout_forbid_sigpipe(fds[i]) != 0) {
            int saved = errno;
            close(fds[0]);
            close(fds[1]);
            fds[0] = fds[1] = -1;
            errno = saved;
            return -1;
        }
    }
    return 0;
#endif
}

/// libssh2_channel_direct_tcpip(): a channel to host:port opened by the server (what `ssh -W` and ProxyJump use).
static inline LIBSSH2_CHANNEL *fanout_channel_direct_tcpip(LIBSSH2_SESSION *session, const char *host, int port) {
    return libssh2_channel_direct_tcpip_ex(session, host, port, "127.0.0.1", 22);
}

/// libssh2_channel_write()
static inline ssize_t fanout_channel_write(LIBSSH2_CHANNEL *channel, const void *buffer, size_t length) {
    return libssh2_channel_write_ex(channel, 0, (const char *)buffer, length);
}

#endif
