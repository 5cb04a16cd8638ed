/* The firmware on a Cortex-M4F board: ARM's MPS2 with the AN386 image, as QEMU emulates it
 * (board.c). UART 0 carries the protocol (docs/protocol.md: 1 Mbaud 8N1); UART 1 the bench's
 * channel to the simulated arm inside and to the board (bench.h). SysTick gives the 1 kHz control
 * tick and the microsecond clock. Between ticks the core sleeps (WFI) until a byte arrives or goes,
 * or the next tick comes.
 *
 * A port to a real board keeps this loop, replaces board.c with the board's UART and timer, and
 * the simulated arm (and bench.c) with the board's drivers behind core/hal.h: docs/firmware.md. */
#include <stdint.h>

#include "arm.h"
#include "bench.h"
#include "board.h"
#include "engine.h"

int main(void)
{
    static jr_sim_arm arm;
    static jr_engine engine;
    static bench_loop_stats stats;
    jr_config cfg;
    jr_sim_arm_init(&arm, &cfg, BOARD_CONTROL_HZ);
    jr_hal hal = jr_sim_arm_hal(&arm);
    board_init();
    jr_engine_init(&engine, &cfg, &hal, board_boot_id(), board_now_us());

    size_t pending = 0;
    for (;;) {
        /* a UART sends a byte at a time: while there are bytes to send, each one that goes
         * wakes the loop to feed it the next */
        board_sleep(pending != 0, bench_send_pending());

        /* what the engine's inbox has no room for waits in the ring for the next tick */
        uint8_t byte;
        while (board_ring_peek(&board_link_rx, &byte)
               && (bench_line_stalled() || jr_engine_receive(&engine, &byte, 1)))
            board_ring_pop(&board_link_rx);
        bench_serve(&arm, &stats, &engine);

        uint32_t due = board_take_ticks_due();
        if (due) {
            if (due > 1)
                stats.late += due - 1;      /* ticks that came while the last one still ran */
            uint64_t start = board_counts();
            jr_engine_tick(&engine, start / BOARD_COUNTS_PER_US);
            uint64_t counts = board_counts() - start;
            if (counts > stats.worst_counts)
                stats.worst_counts = counts;
            stats.ticks++;
        }
        const uint8_t *out = jr_engine_output(&engine, &pending);
        if (pending) {
            size_t done = bench_send_link(out, pending);
            jr_engine_sent(&engine, done);
            pending -= done;
        }
    }
}
