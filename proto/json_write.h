/* A JSON writer for cJSON trees, used instead of cJSON_Print* because those lose precision:
 * cJSON 1.7.15 prints 2^53 as 9.00719925474099e+15 and 0.1+0.2 as 0.3 (it accepts a %.15g
 * form whenever it is within one DBL_EPSILON), which would corrupt echoed ids and results.
 * This writer prints integral numbers exactly and other numbers in their shortest round-trip
 * form, refuses strings that are not UTF-8, stops as soon as the output passes a size limit,
 * and can reserve room in front of the text (for a frame header). Non-logging module. */
#ifndef PROTO_JSON_WRITE_H
#define PROTO_JSON_WRITE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "pf_error.h"

/* Serialises item (unformatted) into a malloc'd buffer of `reserve` unspecified bytes followed
 * by the text and a NUL (not counted in *ret_len, which includes `reserve`). Fails with
 * PF_E_TOO_LARGE when the text alone would exceed max_text bytes, PF_E_INTERNAL for a string
 * that is not UTF-8, a tree nested over 512 levels, or no memory. */
int json_write(const cJSON *item, size_t reserve, size_t max_text, char **ret_buf, size_t *ret_len,
               struct pf_error **err);

#endif
