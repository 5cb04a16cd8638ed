#include "text.h"

char *jr_put_uint(char *p, const char *label, uint32_t value)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10u);
        value /= 10u;
    } while (value);
    while (*label)
        *p++ = *label++;
    while (n)
        *p++ = digits[--n];
    return p;
}
