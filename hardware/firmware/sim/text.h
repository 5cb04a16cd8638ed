/* Numbers into text for the bench's channels, without printf (a firmware keeps its flash). */
#ifndef JR_SIM_TEXT_H
#define JR_SIM_TEXT_H

#include <stdint.h>

/* writes `label` then `value` in decimal at p, no terminator; returns the end */
char *jr_put_uint(char *p, const char *label, uint32_t value);

#endif
