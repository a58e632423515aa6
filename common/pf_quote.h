/* Quoting a client's string in an error message. A message echoes what the client sent so it
 * can find its mistake, but a name of 100,000 bytes would make a 100,000-byte reply (and log
 * line): every such echo is cut to PF_QUOTE_MAX_BYTES, on a UTF-8 character boundary so the
 * message stays valid UTF-8. Use as printf("'%.*s'", pf_quote_len(s), s). */
#ifndef PF_QUOTE_H
#define PF_QUOTE_H

#define PF_QUOTE_MAX_BYTES 64

/* Length of the longest prefix of s, at most PF_QUOTE_MAX_BYTES bytes, that ends on a character
 * boundary; 0 for NULL. */
int pf_quote_len(const char *s);

#endif
