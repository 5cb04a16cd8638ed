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

int jr_next_int(const char **s, long *out)
{
    const char *p = *s;
    while (*p == ' ' || *p == '\t')
        p++;
    int negative = *p == '-';
    if (negative)
        p++;
    if (*p < '0' || *p > '9')
        return 0;
    long value = 0;
    while (*p >= '0' && *p <= '9') {
        if (value > 100000000L)        /* past any figure a bench's line carries */
            return 0;
        value = value * 10 + (*p++ - '0');
    }
    if (*p != '\0' && *p != ' ' && *p != '\t')
        return 0;
    *out = negative ? -value : value;
    *s = p;
    return 1;
}

int jr_at_end(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '\0';
}
