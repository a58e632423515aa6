/* See stack_switch.h. The register lists are the callee-saved sets of the System V x86-64
 * and AAPCS64 calling conventions: everything a C function may expect to survive a call. */
#include "stack_switch.h"

#include <stdint.h>

#if defined(__x86_64__)

/* exec_stack_switch_raw(void **save_sp, void *new_sp) */
__asm__(".text\n"
        ".p2align 4\n"
        ".type exec_stack_switch_raw,@function\n"
        "exec_stack_switch_raw:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size exec_stack_switch_raw, .-exec_stack_switch_raw\n");

#elif defined(__aarch64__)

__asm__(".text\n"
        ".p2align 2\n"
        ".type exec_stack_switch_raw,%function\n"
        "exec_stack_switch_raw:\n"
        "    sub sp, sp, #160\n"
        "    stp x19, x20, [sp, #0]\n"
        "    stp x21, x22, [sp, #16]\n"
        "    stp x23, x24, [sp, #32]\n"
        "    stp x25, x26, [sp, #48]\n"
        "    stp x27, x28, [sp, #64]\n"
        "    stp x29, x30, [sp, #80]\n"
        "    stp d8, d9, [sp, #96]\n"
        "    stp d10, d11, [sp, #112]\n"
        "    stp d12, d13, [sp, #128]\n"
        "    stp d14, d15, [sp, #144]\n"
        "    mov x2, sp\n"
        "    str x2, [x0]\n"
        "    mov sp, x1\n"
        "    ldp x19, x20, [sp, #0]\n"
        "    ldp x21, x22, [sp, #16]\n"
        "    ldp x23, x24, [sp, #32]\n"
        "    ldp x25, x26, [sp, #48]\n"
        "    ldp x27, x28, [sp, #64]\n"
        "    ldp x29, x30, [sp, #80]\n"
        "    ldp d8, d9, [sp, #96]\n"
        "    ldp d10, d11, [sp, #112]\n"
        "    ldp d12, d13, [sp, #128]\n"
        "    ldp d14, d15, [sp, #144]\n"
        "    add sp, sp, #160\n"
        "    ret\n"
        ".size exec_stack_switch_raw, .-exec_stack_switch_raw\n");

#endif

#ifdef EXEC_STACK_SWITCH_ASM

void exec_stack_switch_raw(void **save_sp, void *new_sp);

int
exec_stack_ctx_init(struct exec_stack_ctx *ctx, char *stack, size_t size, void (*entry)(void))
{
    uintptr_t top = ((uintptr_t) stack + size) & ~(uintptr_t) 15;
#    if defined(__x86_64__)
    /* popped by the switch: r15 r14 r13 r12 rbx rbp, then `ret` into entry, which then sees
     * a zero return address at an rsp that is 8 mod 16, as after a call */
    uintptr_t *sp = (uintptr_t *) (top - 64);
    for (int i = 0; i < 6; i++)
        sp[i] = 0;
    sp[6] = (uintptr_t) entry;
    sp[7] = 0;
#    else
    /* x19..x28, x29 (frame pointer) = 0, x30 (link register) = entry, d8..d15 */
    uintptr_t *sp = (uintptr_t *) (top - 160);
    for (int i = 0; i < 20; i++)
        sp[i] = 0;
    sp[11] = (uintptr_t) entry;
#    endif
    ctx->sp = sp;
    return 0;
}

void
exec_stack_switch(struct exec_stack_ctx *from, struct exec_stack_ctx *to)
{
    exec_stack_switch_raw(&from->sp, to->sp);
}

#else

int
exec_stack_ctx_init(struct exec_stack_ctx *ctx, char *stack, size_t size, void (*entry)(void))
{
    if (getcontext(&ctx->uc) < 0)
        return -1;
    ctx->uc.uc_stack.ss_sp = stack;
    ctx->uc.uc_stack.ss_size = size;
    ctx->uc.uc_link = NULL;
    makecontext(&ctx->uc, entry, 0);
    return 0;
}

void
exec_stack_switch(struct exec_stack_ctx *from, struct exec_stack_ctx *to)
{
    swapcontext(&from->uc, &to->uc);
}

#endif
