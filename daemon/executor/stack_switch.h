/* Switching between C stacks without system calls, for generators (generator.c). glibc's
 * swapcontext() saves and restores the signal mask with a system call on every switch, which
 * made each item of a generator cost two syscalls (and would need rt_sigprocmask in the
 * worker's seccomp filter). On x86-64 and AArch64 a few instructions save the callee-saved
 * registers instead; other architectures fall back to ucontext. */
#ifndef DAEMON_EXECUTOR_STACK_SWITCH_H
#define DAEMON_EXECUTOR_STACK_SWITCH_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__aarch64__)
#    define EXEC_STACK_SWITCH_ASM 1
struct exec_stack_ctx {
    void *sp;
};
#else
#    include <ucontext.h>
struct exec_stack_ctx {
    ucontext_t uc;
};
#endif

/* Prepares ctx to run entry() on [stack, stack + size) at its first switch. entry never
 * returns: it must switch away for the last time. Returns 0, or -1 with errno set. */
int exec_stack_ctx_init(struct exec_stack_ctx *ctx, char *stack, size_t size, void (*entry)(void));
/* Saves the current context in from and continues in to. */
void exec_stack_switch(struct exec_stack_ctx *from, struct exec_stack_ctx *to);

#endif
