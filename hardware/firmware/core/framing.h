/* Frames on the wire (docs/protocol.md section 1): seq u16 | type u8 | body | crc u16, little-endian,
 * CRC-16/CCITT-FALSE over seq, type and body, then COBS and one 0x00 delimiter. Pure functions and a
 * byte-at-a-time decoder; no I/O, no allocation. */
#ifndef JR_FRAMING_H
#define JR_FRAMING_H

#include <stddef.h>
#include <stdint.h>

#define JR_MAX_BODY 240u
#define JR_MAX_FRAME (2u + 1u + JR_MAX_BODY + 2u)
/* COBS adds one byte per 254 and one overhead byte; anything longer between delimiters is garbage */
#define JR_MAX_ENCODED (JR_MAX_FRAME + JR_MAX_FRAME / 254u + 2u)
/* the longest a frame can be on the wire, with its delimiter */
#define JR_MAX_WIRE (JR_MAX_ENCODED + 1u)

typedef struct {
    uint16_t seq;
    uint8_t type;
    uint16_t body_len;
    uint8_t body[JR_MAX_BODY];
} jr_frame;

uint16_t jr_crc16(const uint8_t *data, size_t n, uint16_t crc);

/* `out` holds at least n + n / 254 + 1 bytes; returns the encoded length (no zero byte in it) */
size_t jr_cobs_encode(const uint8_t *in, size_t n, uint8_t *out);

/* the decoded length, or -1 for a malformed encoding or one longer than `cap` */
int jr_cobs_decode(const uint8_t *in, size_t n, uint8_t *out, size_t cap);

/* `out` holds JR_MAX_WIRE bytes; returns the bytes to write (COBS and the delimiter), 0 if the body
 * is too long */
size_t jr_frame_encode(const jr_frame *frame, uint8_t *out);

/* what one byte completed */
typedef enum { JR_NOTHING = 0, JR_GOT_FRAME = 1, JR_GOT_CORRUPT = 2 } jr_decoded;

typedef struct {
    uint8_t buffer[JR_MAX_ENCODED];
    size_t len;
    int overflowed;
    uint32_t frames_ok;
    uint32_t frames_corrupt;
} jr_decoder;

void jr_decoder_init(jr_decoder *d);

/* Feed one byte. At a delimiter that ends a frame: JR_GOT_FRAME with `out` filled, or JR_GOT_CORRUPT
 * (COBS, length, CRC, or more than JR_MAX_ENCODED bytes without a delimiter: dropped and counted,
 * never returned). A lone delimiter is nothing. */
jr_decoded jr_decoder_push(jr_decoder *d, uint8_t byte, jr_frame *out);

#endif
