// FanoutObserve: what a test process and its children name on the file system, written down from inside them.
// The record format and its use: include/fanout_observe.h. Linux (glibc) only; elsewhere this file is empty and the
// coordinator falls back to strace or to the safe rule.
//
// How it stays correct:
// - Each libc entry point a program uses to name a path is wrapped: the call is made first, then the path is written
//   (errno kept). Calls glibc makes internally (fopen's open, opendir's openat, nftw's stats) do not pass through
//   the dynamic linker, so the public entry points themselves are wrapped, and a tree walk records every entry it
//   hands to the program.
// - Every program executed through libc (exec*, posix_spawn*) gets LD_PRELOAD and FANOUT_OBSERVE_DIR back in its
//   environment, so a child started with an environment of its own is observed too; one the library cannot enter
//   (static, set-user-ID) is recorded as '!', and the unit counts as not observed.
// - Records are written with system calls only (open, write, close on each record; no descriptor kept, so a
//   program that closes every descriptor cannot make the library write into one of its files), and each path once
//   per process.
#define _GNU_SOURCE 1
// Programs do pass NULL where glibc's headers promise it is not (the call fails with EFAULT): the wrappers check, so
// the compiler must not take the headers' word and drop those checks.
#define __attribute_nonnull__(params)
#define __nonnull(params)
#include "fanout_observe.h"

int fanout_observe_version(void) { return 1; }

#if defined(__linux__)
#include <features.h>
#endif
#if defined(__linux__) && defined(__GLIBC__)

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fts.h>
#include <ftw.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char **environ;

#define PATH_CAP 4096

static char out_dir[PATH_CAP];      // FANOUT_OBSERVE_DIR, empty when not observing
static char self_path[PATH_CAP];    // this library, as the dynamic linker loaded it
static char dir_entry[PATH_CAP + 32];  // "FANOUT_OBSERVE_DIR=…"
static int ready;

// ---- writing records --------------------------------------------------------------------------------------------

#define SEEN_SLOTS 16384
static _Atomic uint64_t seen[SEEN_SLOTS];

static uint64_t hash(const char *s, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) { h ^= (unsigned char)s[i]; h *= 1099511628211ULL; }
    return h | 1;
}

// Whether this record is new in this process (a full table says yes: a record twice is harmless).
static int fresh(const char *record, size_t n) {
    uint64_t h = hash(record, n);
    for (unsigned i = 0; i < 32; i++) {
        _Atomic uint64_t *slot = &seen[(h + i) & (SEEN_SLOTS - 1)];
        uint64_t v = atomic_load_explicit(slot, memory_order_relaxed);
        if (v == h) return 0;
        if (v == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(slot, &expected, h)) return 1;
            if (expected == h) return 0;
        }
    }
    return 1;
}

static void put(const char *record, size_t n) {
    if (!fresh(record, n)) return;
    char file[PATH_CAP + 32];
    long pid = syscall(SYS_getpid);
    int len = snprintf(file, sizeof file, "%s/%ld", out_dir, pid);
    if (len <= 0 || (size_t)len >= sizeof file) return;
    long fd = syscall(SYS_openat, AT_FDCWD, file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    size_t done = 0;
    while (done < n) {
        long w = syscall(SYS_write, fd, record + done, n - done);
        if (w <= 0) break;
        done += (size_t)w;
    }
    syscall(SYS_close, fd);
}

static void blind(const char *why) {
    char record[512];
    int n = snprintf(record, sizeof record, "!%s", why);
    if (n > 0 && (size_t)n < sizeof record) put(record, (size_t)n + 1);
}

// The folder a relative path is in: the working folder, or the one `dirfd` is open on. 0 when unknown.
static size_t base_of(int dirfd, char *buf, size_t cap) {
    if (dirfd == AT_FDCWD) {
        long n = syscall(SYS_getcwd, buf, cap); // the length with its NUL
        return n > 1 ? (size_t)n - 1 : 0;
    }
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    long n = syscall(SYS_readlinkat, AT_FDCWD, link, buf, cap - 1);
    if (n <= 0 || buf[0] != '/') return 0;
    buf[n] = 0;
    return (size_t)n;
}

// Writes `kind` + the path named (made absolute against `dirfd`), once per process.
static void note_at(char kind, int dirfd, const char *path) {
    if (!ready || path == NULL || path[0] == 0) return;
    int saved = errno;
    char record[2 * PATH_CAP + 4];
    size_t n = strnlen(path, PATH_CAP);
    if (n >= PATH_CAP) { blind("a path too long to record"); errno = saved; return; }
    record[0] = kind;
    size_t at = 1;
    if (path[0] != '/') {
        size_t b = base_of(dirfd, record + 1, PATH_CAP);
        if (b == 0) { blind("a relative path in a folder that could not be named"); errno = saved; return; }
        at = 1 + b;
        record[at++] = '/';
    }
    memcpy(record + at, path, n);
    at += n;
    record[at++] = 0;
    put(record, at);
    errno = saved;
}

static void note(char kind, const char *path) { note_at(kind, AT_FDCWD, path); }

// ---- programs executed ------------------------------------------------------------------------------------------

// Whether the dynamic linker will load this library into `path`: 0 yes (or it is not a program at all: exec fails),
// else why not. A script counts as its interpreter.
static const char *unobservable(const char *path, int depth) {
    long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        struct stat st;
        if (syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0) == 0 && S_ISREG(st.st_mode))
            return "a program it cannot read was executed";
        return 0;
    }
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) { syscall(SYS_close, fd); return 0; }
    if (st.st_mode & (S_ISUID | S_ISGID)) { syscall(SYS_close, fd); return "a set-user-ID program was executed"; }
    unsigned char head[256];
    long got = syscall(SYS_pread64, fd, head, sizeof head, 0);
    const char *why = 0;
    if (got >= 2 && head[0] == '#' && head[1] == '!') {
        char interpreter[256];
        size_t i = 2, j = 0;
        while (i < (size_t)got && (head[i] == ' ' || head[i] == '\t')) i++;
        while (i < (size_t)got && head[i] != ' ' && head[i] != '\t' && head[i] != '\n' && j < sizeof interpreter - 1)
            interpreter[j++] = (char)head[i++];
        interpreter[j] = 0;
        if (j > 0 && depth < 4) why = unobservable(interpreter, depth + 1);
    } else if (got >= (long)sizeof(Elf64_Ehdr) && memcmp(head, ELFMAG, SELFMAG) == 0) {
        int interp = 0;
        if (head[EI_CLASS] == ELFCLASS64) {
            Elf64_Ehdr *e = (Elf64_Ehdr *)head;
            for (unsigned k = 0; k < e->e_phnum && !interp; k++) {
                Elf64_Phdr ph;
                if (syscall(SYS_pread64, fd, &ph, sizeof ph, (long)(e->e_phoff + (uint64_t)k * e->e_phentsize)) != sizeof ph) break;
                interp = ph.p_type == PT_INTERP;
            }
        } else if (head[EI_CLASS] == ELFCLASS32) {
            Elf32_Ehdr *e = (Elf32_Ehdr *)head;
            for (unsigned k = 0; k < e->e_phnum && !interp; k++) {
                Elf32_Phdr ph;
                if (syscall(SYS_pread64, fd, &ph, sizeof ph, (long)(e->e_phoff + (uint32_t)k * e->e_phentsize)) != sizeof ph) break;
                interp = ph.p_type == PT_INTERP;
            }
        }
        if (!interp) why = "a statically linked program was executed";
    }
    syscall(SYS_close, fd);
    return why;
}

static void note_exec(const char *path) {
    if (!ready || path == NULL) return;
    int saved = errno;
    note('x', path);
    const char *why = unobservable(path, 0);
    if (why) blind(why);
    errno = saved;
}

// `envp` with LD_PRELOAD naming this library and FANOUT_OBSERVE_DIR set, in `out` (room for `cap` entries); `envp`
// itself when it has both or there is no room. `preload` is scratch room for a longer LD_PRELOAD.
static char *const *with_observer(char *const *envp, char **out, size_t cap, char *preload, size_t preload_cap) {
    if (!ready) return envp;
    if (envp == NULL) envp = (char *const *)environ;
    size_t n = 0, has_dir = 0;
    long preload_at = -1;
    for (; envp[n]; n++) {
        if (strncmp(envp[n], "FANOUT_OBSERVE_DIR=", 19) == 0) has_dir = 1;
        if (strncmp(envp[n], "LD_PRELOAD=", 11) == 0) preload_at = (long)n;
    }
    int has_self = preload_at >= 0 && strstr(envp[preload_at] + 11, self_path) != NULL;
    if (has_dir && has_self) return envp;
    if (n + 3 > cap) { blind("a program was started with an environment too large to add the observer to"); return envp; }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if ((long)i == preload_at && !has_self) continue;
        if (strncmp(envp[i], "FANOUT_OBSERVE_DIR=", 19) == 0) { out[m++] = dir_entry; continue; }
        out[m++] = envp[i];
    }
    if (!has_dir) out[m++] = dir_entry;
    if (!has_self) {
        const char *old = preload_at >= 0 ? envp[preload_at] + 11 : "";
        int len = snprintf(preload, preload_cap, "LD_PRELOAD=%s%s%s", self_path, old[0] ? ":" : "", old);
        if (len <= 0 || (size_t)len >= preload_cap) { blind("LD_PRELOAD too long to add the observer to"); return envp; }
        out[m++] = preload;
    }
    out[m] = NULL;
    return out;
}

#define ENV_CAP 1024
#define REAL(name) \
    static __typeof__(&name) real_##name; \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int execve(const char *path, char *const argv[], char *const envp[]) {
    REAL(execve);
    note_exec(path);
    char *env[ENV_CAP];
    char preload[PATH_CAP * 2];
    return real_execve(path, argv, with_observer(envp, env, ENV_CAP, preload, sizeof preload));
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

// Calls `each` with every candidate of a PATH search for `file`, in order, until it returns nonzero.
static void each_on_path(const char *file, int (*each)(const char *candidate, void *context), void *context) {
    const char *path = getenv("PATH");
    if (path == NULL) path = "/bin:/usr/bin";
    char candidate[PATH_CAP];
    for (const char *p = path;; ) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int n = len == 0 ? snprintf(candidate, sizeof candidate, "%s", file)
                         : snprintf(candidate, sizeof candidate, "%.*s/%s", (int)len, p, file);
        if (n > 0 && (size_t)n < sizeof candidate && each(candidate, context)) return;
        if (!end) return;
        p = end + 1;
    }
}

struct exec_try { char *const *argv; char *const *envp; int saw_eacces; };

// execve of one candidate (it returns only when that failed): whether the search stops here. A program without
// a #! line is run by the shell, as POSIX says.
static int exec_candidate(const char *candidate, void *context) {
    struct exec_try *t = context;
    execve(candidate, t->argv, t->envp);
    if (errno == EACCES) { t->saw_eacces = 1; return 0; }
    if (errno == ENOENT || errno == ENOTDIR || errno == ESTALE || errno == ENODEV || errno == ETIMEDOUT) return 0;
    if (errno == ENOEXEC) {
        size_t argc = 0;
        while (t->argv[argc]) argc++;
        char **sh = alloca((argc + 2) * sizeof *sh);
        sh[0] = (char *)"/bin/sh";
        sh[1] = (char *)candidate;
        for (size_t i = 1; i <= argc; i++) sh[i + 1] = t->argv[i];
        execve("/bin/sh", sh, t->envp);
    }
    return 1;
}

// execvp's search: each candidate is executed through execve above, so each is named and observed.
static int exec_search(const char *file, char *const argv[], char *const envp[]) {
    if (file == NULL || file[0] == 0) { errno = ENOENT; return -1; }
    struct exec_try t = { argv, envp, 0 };
    if (strchr(file, '/')) { exec_candidate(file, &t); return -1; }
    each_on_path(file, exec_candidate, &t);
    if (t.saw_eacces) errno = EACCES;
    return -1;
}

int execvpe(const char *file, char *const argv[], char *const envp[]) { return exec_search(file, argv, envp); }
int execvp(const char *file, char *const argv[]) { return exec_search(file, argv, environ); }

#define COLLECT_ARGS(first, last_out) \
    size_t argc = 1; \
    va_list ap; \
    va_start(ap, first); \
    while (va_arg(ap, char *)) argc++; \
    va_end(ap); \
    char **argv = alloca((argc + 1) * sizeof *argv); \
    va_start(ap, first); \
    argv[0] = (char *)first; \
    for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(ap, char *); \
    last_out; \
    va_end(ap)

int execl(const char *path, const char *arg, ...) {
    COLLECT_ARGS(arg, (void)0);
    return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...) {
    COLLECT_ARGS(arg, (void)0);
    return exec_search(file, argv, environ);
}

int execle(const char *path, const char *arg, ...) {
    char *const *envp;
    COLLECT_ARGS(arg, envp = va_arg(ap, char *const *));
    return execve(path, argv, envp);
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
    REAL(fexecve);
    char link[64], target[PATH_CAP];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long n = syscall(SYS_readlinkat, AT_FDCWD, link, target, sizeof target - 1);
    if (n > 0) { target[n] = 0; note_exec(target); } else if (ready) blind("a program was executed by descriptor");
    char *env[ENV_CAP];
    char preload[PATH_CAP * 2];
    return real_fexecve(fd, argv, with_observer(envp, env, ENV_CAP, preload, sizeof preload));
}

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    REAL(posix_spawn);
    note_exec(path);
    char *env[ENV_CAP];
    char preload[PATH_CAP * 2];
    return real_posix_spawn(pid, path, actions, attr, argv, with_observer(envp, env, ENV_CAP, preload, sizeof preload));
}

// posix_spawnp's search, as the child will make it: each candidate is named, the first program found runs.
static int spawn_candidate(const char *candidate, void *context) {
    (void)context;
    note('r', candidate);
    if (access(candidate, X_OK) != 0) return 0;
    note_exec(candidate);
    return 1;
}

int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[]) {
    REAL(posix_spawnp);
    if (ready && file && !strchr(file, '/')) each_on_path(file, spawn_candidate, NULL);
    else note_exec(file);
    char *env[ENV_CAP];
    char preload[PATH_CAP * 2];
    return real_posix_spawnp(pid, file, actions, attr, argv, with_observer(envp, env, ENV_CAP, preload, sizeof preload));
}

// ---- paths named ------------------------------------------------------------------------------------------------

#define MODE_ARG(flags) \
    mode_t mode = 0; \
    if ((flags) & O_CREAT || ((flags) & O_TMPFILE) == O_TMPFILE) { \
        va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); \
    }

// open and openat take a mode only with O_CREAT or O_TMPFILE.
#define WRAP_OPEN(name) \
    int name(const char *path, int flags, ...) { \
        REAL(name); \
        MODE_ARG(flags); \
        int r = real_##name(path, flags, mode); \
        note('r', path); \
        return r; \
    }
#define WRAP_OPENAT(name) \
    int name(int dirfd, const char *path, int flags, ...) { \
        REAL(name); \
        MODE_ARG(flags); \
        int r = real_##name(dirfd, path, flags, mode); \
        note_at('r', dirfd, path); \
        return r; \
    }

WRAP_OPEN(open)
WRAP_OPEN(open64)
WRAP_OPENAT(openat)
WRAP_OPENAT(openat64)

// The fortified entry points (_FORTIFY_SOURCE), and the versioned stat family older programs call.
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int __xstat(int ver, const char *path, void *buf);
int __xstat64(int ver, const char *path, void *buf);
int __lxstat(int ver, const char *path, void *buf);
int __lxstat64(int ver, const char *path, void *buf);
int __fxstatat(int ver, int dirfd, const char *path, void *buf, int flags);
int __fxstatat64(int ver, int dirfd, const char *path, void *buf, int flags);

#define WRAP_PATH(ret, name, params, args, path) \
    ret name params { REAL(name); ret r = real_##name args; note('r', path); return r; }
#define WRAP_AT(ret, name, params, args, dirfd, path) \
    ret name params { REAL(name); ret r = real_##name args; note_at('r', dirfd, path); return r; }

WRAP_PATH(int, __open_2, (const char *path, int flags), (path, flags), path)
WRAP_PATH(int, __open64_2, (const char *path, int flags), (path, flags), path)
WRAP_AT(int, __openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), dirfd, path)
WRAP_AT(int, __openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), dirfd, path)
WRAP_PATH(int, creat, (const char *path, mode_t mode), (path, mode), path)
WRAP_PATH(int, creat64, (const char *path, mode_t mode), (path, mode), path)
WRAP_PATH(FILE *, fopen, (const char *restrict path, const char *restrict how), (path, how), path)
WRAP_PATH(FILE *, fopen64, (const char *restrict path, const char *restrict how), (path, how), path)
WRAP_PATH(FILE *, freopen, (const char *restrict path, const char *restrict how, FILE *restrict f), (path, how, f), path)
WRAP_PATH(FILE *, freopen64, (const char *restrict path, const char *restrict how, FILE *restrict f), (path, how, f), path)

WRAP_PATH(int, stat, (const char *restrict path, struct stat *restrict buf), (path, buf), path)
WRAP_PATH(int, stat64, (const char *restrict path, struct stat64 *restrict buf), (path, buf), path)
WRAP_PATH(int, lstat, (const char *restrict path, struct stat *restrict buf), (path, buf), path)
WRAP_PATH(int, lstat64, (const char *restrict path, struct stat64 *restrict buf), (path, buf), path)
WRAP_AT(int, fstatat, (int dirfd, const char *restrict path, struct stat *restrict buf, int flags),
        (dirfd, path, buf, flags), dirfd, path)
WRAP_AT(int, fstatat64, (int dirfd, const char *restrict path, struct stat64 *restrict buf, int flags),
        (dirfd, path, buf, flags), dirfd, path)
WRAP_AT(int, statx, (int dirfd, const char *restrict path, int flags, unsigned int mask, struct statx *restrict buf),
        (dirfd, path, flags, mask, buf), dirfd, path)
WRAP_PATH(int, __xstat, (int ver, const char *path, void *buf), (ver, path, buf), path)
WRAP_PATH(int, __xstat64, (int ver, const char *path, void *buf), (ver, path, buf), path)
WRAP_PATH(int, __lxstat, (int ver, const char *path, void *buf), (ver, path, buf), path)
WRAP_PATH(int, __lxstat64, (int ver, const char *path, void *buf), (ver, path, buf), path)
WRAP_AT(int, __fxstatat, (int ver, int dirfd, const char *path, void *buf, int flags), (ver, dirfd, path, buf, flags),
        dirfd, path)
WRAP_AT(int, __fxstatat64, (int ver, int dirfd, const char *path, void *buf, int flags), (ver, dirfd, path, buf, flags),
        dirfd, path)

WRAP_PATH(int, access, (const char *path, int how), (path, how), path)
WRAP_PATH(int, euidaccess, (const char *path, int how), (path, how), path)
WRAP_PATH(int, eaccess, (const char *path, int how), (path, how), path)
WRAP_AT(int, faccessat, (int dirfd, const char *path, int how, int flags), (dirfd, path, how, flags), dirfd, path)
WRAP_PATH(ssize_t, readlink, (const char *restrict path, char *restrict buf, size_t len), (path, buf, len), path)
WRAP_AT(ssize_t, readlinkat, (int dirfd, const char *restrict path, char *restrict buf, size_t len),
        (dirfd, path, buf, len), dirfd, path)
WRAP_PATH(char *, realpath, (const char *restrict path, char *restrict out), (path, out), path)
WRAP_PATH(char *, canonicalize_file_name, (const char *path), (path), path)
WRAP_PATH(int, chdir, (const char *path), (path), path)
WRAP_PATH(DIR *, opendir, (const char *path), (path), path)
WRAP_PATH(int, mkdir, (const char *path, mode_t mode), (path, mode), path)
WRAP_AT(int, mkdirat, (int dirfd, const char *path, mode_t mode), (dirfd, path, mode), dirfd, path)
WRAP_PATH(int, rmdir, (const char *path), (path), path)
WRAP_PATH(int, unlink, (const char *path), (path), path)
WRAP_AT(int, unlinkat, (int dirfd, const char *path, int flags), (dirfd, path, flags), dirfd, path)
WRAP_PATH(int, rename, (const char *old, const char *new), (old, new), old)
WRAP_PATH(int, chmod, (const char *path, mode_t mode), (path, mode), path)
WRAP_PATH(int, truncate, (const char *path, off_t len), (path, len), path)

// A library by name is looked up in the system's folders; one by path is named.
void *dlopen(const char *path, int flags) {
    REAL(dlopen);
    void *r = real_dlopen(path, flags);
    if (path && strchr(path, '/')) note('r', path);
    return r;
}

WRAP_PATH(int, scandir, (const char *restrict dir, struct dirent ***restrict list, int (*select)(const struct dirent *),
                        int (*compare)(const struct dirent **, const struct dirent **)), (dir, list, select, compare), dir)
WRAP_PATH(int, scandir64, (const char *restrict dir, struct dirent64 ***restrict list,
                          int (*select)(const struct dirent64 *), int (*compare)(const struct dirent64 **,
                                                                                 const struct dirent64 **)),
          (dir, list, select, compare), dir)

// Tree walks: every entry handed to the program is named (the walk stats each one inside libc). fts walks without
// changing the working folder (FTS_NOCHDIR: what the program sees is the same), so that a relative entry is placed
// against the folder the walk started in; nftw's entries are placed against the folder it was called in.
FTS *fts_open(char *const *roots, int options, int (*compare)(const FTSENT **, const FTSENT **)) {
    REAL(fts_open);
    return real_fts_open(roots, options | FTS_NOCHDIR, compare);
}

FTSENT *fts_read(FTS *tree) {
    REAL(fts_read);
    FTSENT *e = real_fts_read(tree);
    if (e && e->fts_path) note('r', e->fts_path);
    return e;
}

static _Thread_local char walk_base[PATH_CAP];
static _Thread_local __nftw_func_t walk_user;
static _Thread_local __nftw64_func_t walk_user64;
static _Thread_local __ftw_func_t ftw_user;
static _Thread_local __ftw64_func_t ftw_user64;

// `path` placed against the folder the walk began in (the walk may change folders: FTW_CHDIR).
static void walk_named(const char *path) {
    if (!ready || path == NULL || path[0] == 0) return;
    if (path[0] == '/' || walk_base[0] == 0) { note('r', path); return; }
    char full[2 * PATH_CAP + 2];
    int n = snprintf(full, sizeof full, "%s/%s", walk_base, path);
    if (n > 0 && (size_t)n < sizeof full) note('r', full); else blind("a path too long to record");
}

// Remembers where a walk begins; returns what was remembered before (walks can nest).
static void walk_begin(char *saved) {
    memcpy(saved, walk_base, PATH_CAP);
    int e = errno;
    long n = syscall(SYS_getcwd, walk_base, PATH_CAP);
    if (n <= 1) walk_base[0] = 0;
    errno = e;
}

static int walk_note(const char *path, const struct stat *st, int type, struct FTW *ftw) {
    walk_named(path);
    return walk_user(path, st, type, ftw);
}
static int walk_note64(const char *path, const struct stat64 *st, int type, struct FTW *ftw) {
    walk_named(path);
    return walk_user64(path, st, type, ftw);
}
static int ftw_note(const char *path, const struct stat *st, int type) {
    walk_named(path);
    return ftw_user(path, st, type);
}
static int ftw_note64(const char *path, const struct stat64 *st, int type) {
    walk_named(path);
    return ftw_user64(path, st, type);
}

// The walk is made with the program's function wrapped, the folder it began in remembered (walks nest).
#define WRAP_WALK(name, fn_type, user, trampoline, params, args) \
    int name params { \
        REAL(name); \
        char base[PATH_CAP]; \
        walk_begin(base); \
        fn_type outer = user; \
        user = fn; \
        int r = real_##name args; \
        user = outer; \
        memcpy(walk_base, base, PATH_CAP); \
        note('r', dir); \
        return r; \
    }

WRAP_WALK(nftw, __nftw_func_t, walk_user, walk_note, (const char *dir, __nftw_func_t fn, int fds, int flags),
          (dir, walk_note, fds, flags))
WRAP_WALK(nftw64, __nftw64_func_t, walk_user64, walk_note64, (const char *dir, __nftw64_func_t fn, int fds, int flags),
          (dir, walk_note64, fds, flags))
WRAP_WALK(ftw, __ftw_func_t, ftw_user, ftw_note, (const char *dir, __ftw_func_t fn, int fds), (dir, ftw_note, fds))
WRAP_WALK(ftw64, __ftw64_func_t, ftw_user64, ftw_note64, (const char *dir, __ftw64_func_t fn, int fds),
          (dir, ftw_note64, fds))

// ---- start ------------------------------------------------------------------------------------------------------

__attribute__((constructor)) static void fanout_observe_start(void) {
    const char *dir = getenv("FANOUT_OBSERVE_DIR");
    if (dir == NULL || dir[0] != '/' || strlen(dir) >= sizeof out_dir) return;
    Dl_info info;
    if (!dladdr((void *)&fanout_observe_version, &info) || info.dli_fname == NULL || info.dli_fname[0] != '/'
        || strlen(info.dli_fname) >= sizeof self_path) return;
    strcpy(out_dir, dir);
    strcpy(self_path, info.dli_fname);
    snprintf(dir_entry, sizeof dir_entry, "FANOUT_OBSERVE_DIR=%s", out_dir);
    ready = 1;
    char exe[PATH_CAP];
    long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char record[PATH_CAP + 2];
        record[0] = 's';
        memcpy(record + 1, exe, (size_t)n + 1);
        put(record, (size_t)n + 2);
    } else {
        blind("its own executable could not be named");
    }
}

#endif
