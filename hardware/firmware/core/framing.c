#include "framing.h"

#include <string.h>

uint16_t jr_crc16(const uint8_t *data, size_t n, uint16_t crc)
{
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint16_t)((uint16_t)data[i] << 8);
        for (int bit = 0; bit < 8; bit++)
            crc = (uint16_t)((crc & 0x8000u) ? ((unsigned)crc << 1) ^ 0x1021u : (unsigned)crc << 1);
    }
    return crc;
}

size_t jr_cobs_encode(const uint8_t *in, size_t n, uint8_t *out)
{
    size_t code_at = 0, o = 1;
    uint8_t code = 1;
    for (size_t i = 0; i < n; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            code_at = o++;
            code = 1;
            continue;
        }
        out[o++] = in[i];
        if (++code == 255) {        /* a block of 254 non-zero bytes: no zero implied after it */
            out[code_at] = code;
            code_at = o++;
            code = 1;
        }
    }
    out[code_at] = code;
    return o;
}

int jr_cobs_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    size_t i = 0, o = 0;
    while (i < n) {
        uint8_t code = in[i];
        if (code == 0)
            return -1;
        size_t end = i + code;
        if (end > n)
            return -1;
        for (size_t k = i + 1; k < end; k++) {
            if (in[k] == 0 || o >= cap)
                return -1;
            out[o++] = in[k];
        }
        i = end;
        if (code < 255 && i < n) {
            if (o >= cap)
                return -1;
            out[o++] = 0;
        }
    }
    return (int)o;
}

size_t jr_frame_encode(const jr_frame *frame, uint8_t *out)
{
    uint8_t raw[JR_MAX_FRAME];
    if (frame->body_len > JR_MAX_BODY)
        return 0;
    raw[0] = (uint8_t)(frame->seq & 0xFFu);
    raw[1] = (uint8_t)(frame->seq >> 8);
    raw[2] = frame->type;
    memcpy(raw + 3, frame->body, frame->body_len);
    size_t n = 3u + frame->body_len;
    uint16_t crc = jr_crc16(raw, n, 0xFFFFu);
    raw[n++] = (uint8_t)(crc & 0xFFu);
    raw[n++] = (uint8_t)(crc >> 8);
    size_t len = jr_cobs_encode(raw, n, out);
    out[len++] = 0;
    return len;
}

void jr_decoder_init(jr_decoder *d)
{
    memset(d, 0, sizeof *d);
}

static jr_decoded finish(jr_decoder *d, jr_frame *out)
{
    uint8_t raw[JR_MAX_FRAME];
    int overflowed = d->overflowed;
    size_t len = d->len;
    d->overflowed = 0;
    d->len = 0;
    if (overflowed) {
        d->frames_corrupt++;
        return JR_GOT_CORRUPT;
    }
    int n = jr_cobs_decode(d->buffer, len, raw, sizeof raw);
    if (n < 5) {
        d->frames_corrupt++;
        return JR_GOT_CORRUPT;
    }
    uint16_t crc = (uint16_t)(raw[n - 2] | (raw[n - 1] << 8));
    if (jr_crc16(raw, (size_t)n - 2u, 0xFFFFu) != crc) {
        d->frames_corrupt++;
        return JR_GOT_CORRUPT;
    }
    out->seq = (uint16_t)(raw[0] | (raw[1] << 8));
    out->type = raw[2];
    out->body_len = (uint16_t)(n - 5);
    memcpy(out->body, raw + 3, out->body_len);
    d->frames_ok++;
    return JR_GOT_FRAME;
}

jr_decoded jr_decoder_push(jr_decoder *d, uint8_t byte, jr_frame *out)
{
    if (byte == 0) {
        if (d->len || d->overflowed)
            return finish(d, out);
        return JR_NOTHING;
    }
    if (d->len >= JR_MAX_ENCODED) {
        d->overflowed = 1;          /* garbage without delimiters: counted once, at the 0x00 */
        d->len = 0;
        return JR_NOTHING;
    }
    d->buffer[d->len++] = byte;
    return JR_NOTHING;
}
