#include "pf_socket_path.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

int
pf_socket_path_resolve(const char *explicit_path, char **ret_path, struct pf_error **err)
{
    const char *source = "--socket";
    const char *path = explicit_path;
    char *built = NULL;

    if (!path || !*path) {
        path = secure_getenv("PYFENCE_SOCKET");
        source = "$PYFENCE_SOCKET";
    }
    if (!path || !*path) {
        if (geteuid() == 0) {
            path = "/run/pyfence/pyfence.sock";
            source = "default for root";
        } else {
            const char *rt = secure_getenv("XDG_RUNTIME_DIR");
            if (!rt || !*rt)
                return pf_error_set(err, PF_E_CONFIG,
                                    "no socket path: pass --socket PATH or set PYFENCE_SOCKET "
                                    "(XDG_RUNTIME_DIR is not set)");
            if (asprintf(&built, "%s/pyfence.sock", rt) < 0)
                return pf_error_set(err, PF_E_INTERNAL, "out of memory");
            path = built;
            source = "$XDG_RUNTIME_DIR";
        }
    }
    size_t max = sizeof(((struct sockaddr_un *) 0)->sun_path) - 1;
    if (strlen(path) > max) {
        pf_error_set(err, PF_E_CONFIG,
                     "socket path '%s' (from %s) is %zu bytes, over the %zu "
                     "bytes a Unix socket address holds",
                     path, source, strlen(path), max);
        free(built);
        return -1;
    }
    *ret_path = built ? built : strdup(path);
    if (!*ret_path)
        return pf_error_set(err, PF_E_INTERNAL, "out of memory");
    return 0;
}
