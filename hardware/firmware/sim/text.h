/* Numbers into text for the bench's channels, without printf (a firmware keeps its flash). */
#ifndef JR_SIM_TEXT_H
#define JR_SIM_TEXT_H

#include <stdint.h>

/* writes `label` then `value` in decimal at p, no terminator; returns the end */
char *jr_put_uint(char *p, const char *label, uint32_t value);
/* reads a decimal integer (spaces before it, a space or the end after it) at *s into *out and
 * moves *s past it; 0 if there is none */
int jr_next_int(const char **s, long *out);
/* nothing but spaces left */
int jr_at_end(const char *s);

#endif
