/* The bench's side of the board: UART 1 carries text lines to the simulated arm inside
 * (sim/arm.h: `force`, `presence`, `contact`) and to the board itself:
 *   stats                        the control loop's figures (bench_stats)
 *   mark                         a flag a reset clears, so the bench can tell a reset happened
 *   watchdog MS                  the engine's watchdog, for a host on a loaded machine (a reset
 *                                restores the product's)
 *   line corrupt|drop|stall|ok   a fault on the protocol's line, as a noisy or cut cable makes
 *                                it: one byte of the next frame sent flipped, the next frame
 *                                lost whole (each answered when that frame goes), nothing
 *                                passing either way; `ok` ends them
 * Every line gets one answer line (`ok`, a figure, or `error: ...`); an empty line none. */
#ifndef JR_BENCH_H
#define JR_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "arm.h"
#include "engine.h"

typedef struct {
    uint32_t ticks, late;
    uint64_t worst_counts;          /* SysTick counts of the longest control tick */
} bench_loop_stats;

/* read the lines that arrived, answer them; the answers go out through bench_send_pending */
void bench_serve(jr_sim_arm *arm, const bench_loop_stats *stats, jr_engine *engine);
/* answers still to send (the main loop does not sleep on them) */
int bench_send_pending(void);
/* the engine's output to UART 0 through the line's faults; returns how many bytes are done
 * with (sent, or lost to a fault) */
size_t bench_send_link(const uint8_t *out, size_t n);
/* the line stalled: what arrives is dropped before the engine sees it */
int bench_line_stalled(void);

#endif
