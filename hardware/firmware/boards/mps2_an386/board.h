/* ARM's MPS2 board with the AN386 image (Cortex-M4F, 25 MHz), as QEMU emulates it
 * (qemu-system-arm -M mps2-an386), reduced to what the firmware uses: two CMSDK UARTs whose
 * receive interrupts fill rings, SysTick as the control tick and the clock, and a boot record in
 * RAM a reset leaves alone. A port to another board rewrites this file's pair (board.c). */
#ifndef JR_BOARD_H
#define JR_BOARD_H

#include <stddef.h>
#include <stdint.h>

#define BOARD_CPU_HZ 25000000u
#define BOARD_CONTROL_HZ 1000u
#define BOARD_COUNTS_PER_US (BOARD_CPU_HZ / 1000000u)

/* bytes that arrived, from a receive interrupt to the main loop */
typedef struct {
    volatile uint8_t data[512];
    volatile uint32_t head, tail;
    volatile uint32_t overruns;
} board_ring;

extern board_ring board_link_rx;     /* UART 0: the protocol, 1 Mbaud */
extern board_ring board_bench_rx;    /* UART 1: the bench's channel (bench.c) */
extern volatile uint32_t board_ticks_due;

void board_init(void);
int board_ring_peek(const board_ring *r, uint8_t *byte);
void board_ring_pop(board_ring *r);
int board_ring_empty(const board_ring *r);
/* UART 0's transmitter has room for a byte; put one there */
int board_link_ready(void);
void board_link_put(uint8_t byte);
/* as many of n bytes as UART 1's transmitter takes now; returns how many went */
size_t board_bench_send(const uint8_t *data, size_t n);
/* SysTick counts (BOARD_COUNTS_PER_US a microsecond) since reset, and microseconds */
uint64_t board_counts(void);
uint64_t board_now_us(void);
/* a boot id no earlier boot had, as far as the board can tell (docs/protocol.md HELLO_REPLY) */
uint32_t board_boot_id(void);
/* sleep until an interrupt unless there is work: a tick due, bytes arrived, or bytes to send
 * (`link_to_send`, `bench_to_send`) and room in their transmitter. A transmitter that has no
 * room wakes the loop with its interrupt when it has, so a host that does not read keeps the
 * board asleep, not spinning. */
void board_sleep(int link_to_send, int bench_to_send);
uint32_t board_take_ticks_due(void);

#endif
