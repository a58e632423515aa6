/* Prints the limits table (policy/policy_limits.c) as an scdoc table, for pyfence-profile(5):
 * the man page is generated from the same table the code enforces. */
#include <stdio.h>

#include "policy_limits.h"

int
main(void)
{
    static const char *const scope_names[] = {"daemon", "job", "profile"};
    printf("[[ *name*\n:[ *scope*\n:[ *default*\n:[ *minimum*\n:[ *maximum*\n:[ *meaning*\n");
    for (int i = 0; i < _POLICY_LIMIT_MAX; i++) {
        const struct policy_limit_def *d = policy_limit_def((enum policy_limit) i);
        printf("|  %s\n:  %s\n:  %lld\n:  %lld\n:  %lld\n:  %s\n", d->name, scope_names[d->scope],
               (long long) d->def, (long long) d->min, (long long) d->max, d->help);
    }
    return 0;
}
