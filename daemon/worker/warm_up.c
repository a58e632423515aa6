#include "warm_up.h"

#include <cjson/cJSON.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "pf_cleanup.h"

/* Touches what a typical snippet touches: literals of each kind, a comprehension, a call with
 * every argument kind, string formatting, repr, print, and a last expression for the result. */
static const char warm_up_code[] = "def f(x, *a, k=1, **kw):\n"
                                   "    return [x, a, k, kw]\n"
                                   "v = {'s': 'text %d' % 1, 'l': [i * 2 for i in range(8)],\n"
                                   "     't': (1.5, None, True), 'b': b'x'}\n"
                                   "for key, val in v.items():\n"
                                   "    print(key, repr(val), f(key, 1, k=2, z=3), len(str(val)))\n"
                                   "v['l'][0] + 1\n";

/* Small budgets: the code above needs a few hundred operations. */
static const struct exec_policy warm_up_policy = {
        .max_ops = 100000,
        .max_while_iterations = 1000,
        .max_recursion = 50,
        .max_output_bytes = 64 * 1024,
        .max_log_chars = 4096,
        .timeout_ms = 1000,
        .max_result_bytes = 64 * 1024,
};

static void
discard_output(void *userdata, const char *data, size_t len)
{
    (void) userdata, (void) data, (void) len;
}

struct exec_env *
worker_warm_up_env_new(struct pf_error **err)
{
    return exec_env_new(&warm_up_policy, err);
}

bool
worker_warm_up_wanted(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

int
worker_warm_up(int fd, struct exec_env *scratch)
{
    return worker_warm_up_wanted(fd) ? worker_warm_up_run(scratch) : 0;
}

int
worker_warm_up_run(struct exec_env *scratch)
{
    if (!scratch)
        return -1;
    cJSON *res = exec_env_run(scratch, warm_up_code, discard_output, NULL);
    const cJSON *outcome = cJSON_GetObjectItemCaseSensitive(res, "outcome");
    int ret = cJSON_IsString(outcome) && strcmp(outcome->valuestring, "ok") == 0 ? 1 : -1;
    /* The result's way out: the worker encodes its result the same way. */
    _cleanup_free_ char *text = res ? cJSON_PrintUnformatted(res) : NULL;
    cJSON_Delete(text ? cJSON_Parse(text) : NULL);
    cJSON_Delete(res);
    return ret;
}
