#include "pf_quote.h"

#include <string.h>

int
pf_quote_len(const char *s)
{
    if (!s)
        return 0;
    size_t n = strnlen(s, PF_QUOTE_MAX_BYTES + 1);
    if (n <= PF_QUOTE_MAX_BYTES)
        return (int) n;
    n = PF_QUOTE_MAX_BYTES;
    /* s[n] exists (the string is longer); back up while it is a continuation byte, so the cut
     * falls before the character it continues. */
    while (n > 0 && ((unsigned char) s[n] & 0xC0) == 0x80)
        n--;
    return (int) n;
}
