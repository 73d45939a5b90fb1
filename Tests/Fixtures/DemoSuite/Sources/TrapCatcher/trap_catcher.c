#include "trap_catcher.h"
#include <setjmp.h>
#include <signal.h>
#include <string.h>

static __thread sigjmp_buf *landing;

static void on_trap(int sig) {
    (void)sig;
    if (landing) siglongjmp(*landing, 1);
}

int trap_catcher_run(void (*body)(void *), void *context) {
    struct sigaction sa, old_ill, old_trap;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_trap;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGILL, &sa, &old_ill);
    sigaction(SIGTRAP, &sa, &old_trap);
    sigjmp_buf here;
    int trapped = 0;
    landing = &here;
    if (sigsetjmp(here, 1) == 0) body(context); else trapped = 1;
    landing = 0;
    sigaction(SIGILL, &old_ill, 0);
    sigaction(SIGTRAP, &old_trap, 0);
    return trapped;
}
