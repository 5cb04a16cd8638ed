/* The framing core on its own, under the sanitizers: the CRC's check value, COBS round trips at
 * the block boundaries, a frame through the decoder byte by byte, and garbage counted once. */
#include <stdio.h>
#include <string.h>

#include "framing.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

static void test_crc(void)
{
    const uint8_t check[] = "123456789";
    CHECK(jr_crc16(check, 9, 0xFFFFu) == 0x29B1u);
}

static void test_cobs_round_trips(void)
{
    static uint8_t in[600], enc[700], out[600];
    const size_t lengths[] = {0, 1, 253, 254, 255, 508, 509, 600};
    for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
        size_t n = lengths[k];
        for (size_t i = 0; i < n; i++)
            in[i] = (uint8_t)((i % 7 == 3) ? 0 : (i * 31 + 1) % 256 ? (i * 31 + 1) % 256 : 1);
        size_t e = jr_cobs_encode(in, n, enc);
        CHECK(memchr(enc, 0, e) == NULL);
        CHECK(jr_cobs_decode(enc, e, out, sizeof out) == (int)n);
        CHECK(memcmp(in, out, n) == 0);
    }
    const uint8_t bad[] = {3, 1, 0};
    CHECK(jr_cobs_decode(bad, sizeof bad, out, sizeof out) == -1);
}

static void test_decoder(void)
{
    jr_frame f = {.seq = 0xBEEF, .type = 0x05, .body_len = 3, .body = {0, 7, 0}}, got;
    uint8_t wire[JR_MAX_WIRE];
    size_t n = jr_frame_encode(&f, wire);
    jr_decoder d;
    jr_decoder_init(&d);
    jr_decoded last = JR_NOTHING;
    for (size_t i = 0; i < n; i++)
        last = jr_decoder_push(&d, wire[i], &got);
    CHECK(last == JR_GOT_FRAME && got.seq == 0xBEEF && got.type == 0x05 && got.body_len == 3);
    CHECK(memcmp(got.body, f.body, 3) == 0);
    wire[2] ^= 0x10;                                   /* a damaged frame: counted, not returned */
    for (size_t i = 0; i < n; i++)
        last = jr_decoder_push(&d, wire[i], &got);
    CHECK(last == JR_GOT_CORRUPT && d.frames_corrupt == 1);
    for (int i = 0; i < 1000; i++)                     /* garbage: one corrupt frame at the 0x00 */
        CHECK(jr_decoder_push(&d, 0x41, &got) == JR_NOTHING);
    CHECK(jr_decoder_push(&d, 0, &got) == JR_GOT_CORRUPT && d.frames_corrupt == 2);
    CHECK(jr_decoder_push(&d, 0, &got) == JR_NOTHING);    /* a lone delimiter */
}

int main(void)
{
    test_crc();
    test_cobs_round_trips();
    test_decoder();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("framing: all checks passed\n");
    return failures != 0;
}
