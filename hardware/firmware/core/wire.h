/* Little-endian fields in a byte buffer, whatever the CPU's own order (docs/protocol.md: all
 * integers and floats are little-endian; floats IEEE-754 binary32). */
#ifndef JR_WIRE_H
#define JR_WIRE_H

#include <stdint.h>
#include <string.h>

static inline uint16_t jr_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static inline uint32_t jr_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline float jr_get_f32(const uint8_t *p)
{
    uint32_t bits = jr_get_u32(p);
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

static inline uint8_t *jr_put_u8(uint8_t *p, uint8_t v) { *p = v; return p + 1; }

static inline uint8_t *jr_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static inline uint8_t *jr_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
    return p + 4;
}

static inline uint8_t *jr_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((v >> (8 * i)) & 0xFFu);
    return p + 8;
}

static inline uint8_t *jr_put_f32(uint8_t *p, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return jr_put_u32(p, bits);
}

#endif
