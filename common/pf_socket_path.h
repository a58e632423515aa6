/* Socket path resolution, shared by pyfenced and every client (DESIGN.md, contract):
 * `--socket PATH`; else $PYFENCE_SOCKET; else /run/pyfence/pyfence.sock as root,
 * $XDG_RUNTIME_DIR/pyfence.sock otherwise. */
#ifndef PF_SOCKET_PATH_H
#define PF_SOCKET_PATH_H

#include "pf_error.h"

/* explicit_path may be NULL. On success *ret_path is a malloc'd path that fits sun_path. */
int pf_socket_path_resolve(const char *explicit_path, char **ret_path, struct pf_error **err);

#endif
