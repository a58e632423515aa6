/* Python's repr() text of a tagged JSON value (proto/PROTOCOL.md "Values"): what `pyfence
 * session get` prints. Python's own rules for quotes, escapes and float digits; datetimes are
 * written datetime.date.fromisoformat('...'); an untranslatable value ("$type": "repr") is the
 * repr the worker made. */
#ifndef CLIENT_CLI_REPR_H
#define CLIENT_CLI_REPR_H

#include <cjson/cJSON.h>

/* malloc'd text; NULL on OOM. */
char *cli_repr(const cJSON *tagged_value);

#endif
