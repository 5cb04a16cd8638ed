#include "bench.h"

#include <string.h>

#include "board.h"
#include "text.h"

typedef struct {
    uint8_t corrupt, drop, stall, corrupting;
    size_t frame_pos, corrupt_at;
} line_faults;

static line_faults faults;
static uint8_t marked;
/* answers waiting for UART 1 */
static char answers[256];
static size_t answers_len;

static void answer(const char *reply);

int bench_line_stalled(void) { return faults.stall; }

size_t bench_send_link(const uint8_t *out, size_t n)
{
    size_t i = 0;
    if (faults.stall) {                  /* the engine leaves whole frames: all of them lost */
        faults.frame_pos = 0;
        return n;
    }
    while (i < n) {
        if (faults.frame_pos == 0 && (faults.corrupt || faults.drop)) {
            size_t end = i;
            while (end < n && out[end] != 0)
                end++;
            if (end < n && faults.drop) {
                faults.drop = 0;
                i = end + 1;
                answer("ok");                /* the `line drop` answered as it happens */
                continue;
            }
            if (end < n) {
                faults.corrupt = 0;
                faults.corrupting = 1;
                faults.corrupt_at = (end - i) / 2;
            }
        }
        if (!board_link_ready())
            break;
        uint8_t byte = out[i++];
        int delimiter = byte == 0;
        if (faults.corrupting && faults.frame_pos == faults.corrupt_at) {
            byte ^= 0x24u;
            faults.corrupting = 0;
            answer("ok");                    /* the `line corrupt` answered as it happens */
        }
        board_link_put(byte);
        faults.frame_pos = delimiter ? 0 : faults.frame_pos + 1;
    }
    return i;
}

/* `line corrupt` and `line drop` are answered when the frame they spoil goes (a bench times the
 * host's detection from there); the others at once */
static int line_command(const char *text, char *reply)
{
    reply[0] = '\0';
    if (strcmp(text, "line corrupt") == 0)
        faults.corrupt = 1;
    else if (strcmp(text, "line drop") == 0)
        faults.drop = 1;
    else if (strcmp(text, "line stall") == 0)
        faults.stall = 1;
    else if (strcmp(text, "line ok") == 0)
        faults.corrupt = faults.drop = faults.stall = faults.corrupting = 0;
    else
        return 0;
    if (!faults.corrupt && !faults.drop)
        strcpy(reply, "ok");
    return 1;
}

/* `watchdog MS`: the engine's watchdog, for a bench whose host shares a loaded machine with other
 * work (its heartbeats can come late by more than the product's 200 ms); a reset restores it */
static void watchdog_command(const char *text, jr_engine *engine, char *reply)
{
    long ms;
    const char *p = text + 9;
    if (!jr_next_int(&p, &ms) || !jr_at_end(p) || ms < 10 || ms > 10000) {
        strcpy(reply, "error: watchdog MS (10 to 10000)");
        return;
    }
    engine->cfg.watchdog_s = (float)ms * 1e-3f;
    strcpy(reply, "ok");
}

static void stats_line(const bench_loop_stats *s, const jr_engine *e, char *out)
{
    /* a tick's time in SysTick counts at 25 MHz, 40 ns each; under QEMU's -icount shift=0 a
     * nanosecond is an instruction */
    uint64_t worst_ns = s->worst_counts * (1000u / BOARD_COUNTS_PER_US);
    char *p = out;
    p = jr_put_uint(p, "stats ticks=", s->ticks);
    p = jr_put_uint(p, " worst_tick_ns=", worst_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)worst_ns);
    p = jr_put_uint(p, " late_ticks=", s->late);
    p = jr_put_uint(p, " rx_overruns=", board_link_rx.overruns);
    p = jr_put_uint(p, " internal_errors=", jr_engine_internal_errors(e));
    p = jr_put_uint(p, " engine_bytes=", (uint32_t)jr_engine_size());
    p = jr_put_uint(p, " marked=", marked);
    *p = '\0';
}

static void answer(const char *reply)
{
    size_t n = strlen(reply);
    if (answers_len + n + 1 > sizeof answers)
        return;                          /* a bench that does not read its answers loses them */
    memcpy(answers + answers_len, reply, n);
    answers_len += n;
    answers[answers_len++] = '\n';
}

void bench_serve(jr_sim_arm *arm, const bench_loop_stats *stats, jr_engine *engine)
{
    static char line[96];
    static size_t len;
    static uint8_t too_long;
    uint8_t byte;
    while (board_ring_peek(&board_bench_rx, &byte)) {
        board_ring_pop(&board_bench_rx);
        if (byte == '\r')
            continue;
        if (byte != '\n') {
            if (len < sizeof line - 1)
                line[len++] = (char)byte;
            else
                too_long = 1;
            continue;
        }
        line[len] = '\0';
        size_t had = len;
        len = 0;
        char reply[160];
        if (too_long) {
            too_long = 0;
            answer("error: line too long");
        } else if (had == 0) {
            /* an empty line ends whatever came before: no answer */
        } else if (strcmp(line, "stats") == 0) {
            stats_line(stats, engine, reply);
            answer(reply);
        } else if (strcmp(line, "mark") == 0) {
            marked = 1;
            answer("ok");
        } else if (strncmp(line, "watchdog ", 9) == 0) {
            watchdog_command(line, engine, reply);
            answer(reply);
        } else if (line_command(line, reply)) {
            if (reply[0])
                answer(reply);
        } else if (strncmp(line, "line ", 5) == 0) {
            answer("error: line corrupt|drop|stall|ok");
        } else {
            jr_sim_command(arm, line, reply, sizeof reply);
            answer(reply);
        }
    }
    size_t sent = board_bench_send((const uint8_t *)answers, answers_len);
    memmove(answers, answers + sent, answers_len - sent);
    answers_len -= sent;
}

int bench_send_pending(void) { return answers_len != 0; }
