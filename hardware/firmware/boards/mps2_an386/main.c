/* The firmware on a Cortex-M4F board: ARM's MPS2 with the AN386 image, as QEMU emulates it
 * (qemu-system-arm -M mps2-an386). UART 0 carries the protocol (docs/protocol.md: 1 Mbaud 8N1);
 * UART 1 is the bench's stimulus channel to the simulated arm inside (sim/arm.h); it also answers
 * `stats` with the control loop's figures, and `mark` sets a flag a reset clears. SysTick gives the 1 kHz control tick and the
 * microsecond clock. Between ticks the core sleeps (WFI) until a byte or the next tick wakes it.
 *
 * A port to a real board replaces this file's registers (UARTs, timer) and the simulated arm with
 * the board's drivers behind core/hal.h; docs/firmware.md says how. */
#include <stdint.h>
#include <string.h>

#include "arm.h"
#include "engine.h"

#define CPU_HZ 25000000u                 /* the MPS2's system clock */
#define CONTROL_HZ 1000u
#define RELOAD (CPU_HZ / CONTROL_HZ)     /* SysTick counts per control tick */
#define COUNTS_PER_US (CPU_HZ / 1000000u)
#define PROTOCOL_BAUD 1000000u

/* CMSDK APB UART (ARM DDI 0479): data, state, control, interrupt status/clear, baud divider */
typedef struct {
    volatile uint32_t data, state, ctrl, intstatus, bauddiv;
} cmsdk_uart;

#define UART0 ((cmsdk_uart *)0x40004000u)
#define UART1 ((cmsdk_uart *)0x40005000u)
#define STATE_TX_FULL 1u
#define STATE_RX_FULL 2u
#define CTRL_TX_EN 1u
#define CTRL_RX_EN 2u
#define CTRL_RX_IRQ 8u
#define INT_RX 2u

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define IRQ_UART0_RX 0u
#define IRQ_UART1_RX 2u

/* bytes that arrived, from the receive interrupt to the main loop; a power of two */
typedef struct {
    uint8_t data[512];
    volatile uint32_t head, tail;
    volatile uint32_t overruns;
} ring;

static ring link_rx, stim_rx;
static volatile uint32_t ms_count, ticks_due;

static void ring_put(ring *r, uint8_t byte)
{
    uint32_t head = r->head;
    if (head - r->tail >= sizeof r->data) {
        r->overruns++;            /* as a UART's overrun: the byte is lost, the CRC catches it */
        return;
    }
    r->data[head % sizeof r->data] = byte;
    r->head = head + 1;
}

static int ring_peek(const ring *r, uint8_t *byte)
{
    if (r->tail == r->head)
        return 0;
    *byte = r->data[r->tail % sizeof r->data];
    return 1;
}

static int ring_get(ring *r, uint8_t *byte)
{
    if (!ring_peek(r, byte))
        return 0;
    r->tail++;
    return 1;
}

static void uart_receive(cmsdk_uart *u, ring *r)
{
    u->intstatus = INT_RX;
    while (u->state & STATE_RX_FULL)
        ring_put(r, (uint8_t)u->data);
}

void systick_handler(void)
{
    ms_count++;
    ticks_due++;
}

void uart0_rx_handler(void) { uart_receive(UART0, &link_rx); }
void uart1_rx_handler(void) { uart_receive(UART1, &stim_rx); }

static void uart_init(cmsdk_uart *u, uint32_t baud)
{
    u->bauddiv = CPU_HZ / baud;
    u->ctrl = CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_IRQ;
}

/* as many bytes as the transmitter takes now; returns how many went */
static size_t uart_send(cmsdk_uart *u, const uint8_t *data, size_t n)
{
    size_t sent = 0;
    while (sent < n && !(u->state & STATE_TX_FULL))
        u->data = data[sent++];
    return sent;
}

/* a whole line on the stimulus channel (its answers are short and rare: wait for the room) */
static void uart_line(cmsdk_uart *u, const char *text)
{
    size_t n = strlen(text), sent = 0;
    while (sent < n)
        sent += uart_send(u, (const uint8_t *)text + sent, n - sent);
    while (uart_send(u, (const uint8_t *)"\n", 1) == 0) {
    }
}

/* microseconds since reset, from the tick count and the SysTick counter within the tick */
static uint64_t now_us(void)
{
    uint32_t ms, count;
    do {
        ms = ms_count;
        count = SYST_CVR;
    } while (ms != ms_count);
    return (uint64_t)ms * 1000u + (RELOAD - 1u - count) / COUNTS_PER_US;
}

/* Boots counted across resets in RAM a reset leaves alone (a cold start finds garbage there,
 * which the check word tells): the host tells one boot from the next by the boot id it gives. A
 * board with a random number generator or a unique id mixes that in too. */
typedef struct {
    uint32_t check, boots;
} boot_record;

__attribute__((section(".noinit"))) static boot_record boot_record_ram;

static uint32_t next_boot_id(void)
{
    boot_record *r = &boot_record_ram;
    if (r->check != ~r->boots)
        r->boots = 0;
    r->boots++;
    r->check = ~r->boots;
    /* a multiplicative hash spreads consecutive counts over the 32 bits */
    return r->boots * 2654435761u;
}

static void irq_off(void) { __asm volatile("cpsid i" ::: "memory"); }
static void irq_on(void) { __asm volatile("cpsie i" ::: "memory"); }

/* the control loop's own figures, for `stats` on the stimulus channel */
typedef struct {
    uint32_t ticks, worst_counts, late;
    uint32_t marked;        /* `mark` sets it, a boot clears it: the bench tells a reset by it */
} loop_stats;

static char *put_uint(char *p, const char *label, uint32_t value)
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

static void stats_line(const loop_stats *s, const jr_engine *e, char *out)
{
    char *p = out;
    p = put_uint(p, "stats ticks=", s->ticks);
    /* a tick's worst time in SysTick counts at 25 MHz: 40 ns each (under QEMU's -icount shift=0,
     * 40 instructions each) */
    p = put_uint(p, " worst_tick_ns=", s->worst_counts * (1000u / COUNTS_PER_US));
    p = put_uint(p, " late_ticks=", s->late);
    p = put_uint(p, " rx_overruns=", link_rx.overruns);
    p = put_uint(p, " internal_errors=", jr_engine_internal_errors(e));
    p = put_uint(p, " engine_bytes=", (uint32_t)jr_engine_size());
    p = put_uint(p, " marked=", s->marked);
    *p = '\0';
}

static void serve_stimulus(jr_sim_arm *arm, loop_stats *s, const jr_engine *e)
{
    static char line[96];
    static size_t len;
    uint8_t byte;
    while (ring_get(&stim_rx, &byte)) {
        if (byte == '\r')
            continue;
        if (byte != '\n') {
            if (len < sizeof line - 1)
                line[len++] = (char)byte;
            continue;
        }
        line[len] = '\0';
        if (len == 0)                   /* an empty line ends whatever came before: no answer */
            continue;
        len = 0;
        char reply[160];
        if (strcmp(line, "stats") == 0) {
            stats_line(s, e, reply);
        } else if (strcmp(line, "mark") == 0) {
            s->marked = 1;
            strcpy(reply, "ok");
        } else
            jr_sim_command(arm, line, reply, sizeof reply);
        uart_line(UART1, reply);
    }
}

int main(void)
{
    static jr_sim_arm arm;
    static jr_engine engine;
    static loop_stats stats;
    jr_config cfg;
    jr_sim_arm_init(&arm, &cfg, CONTROL_HZ);
    jr_hal hal = jr_sim_arm_hal(&arm);

    uart_init(UART0, PROTOCOL_BAUD);
    uart_init(UART1, 115200u);
    NVIC_ISER0 = (1u << IRQ_UART0_RX) | (1u << IRQ_UART1_RX);
    SYST_RVR = RELOAD - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u;                      /* the processor clock, interrupt, on */
    jr_engine_init(&engine, &cfg, &hal, next_boot_id(), now_us());

    for (;;) {
        irq_off();
        if (!ticks_due && link_rx.head == link_rx.tail && stim_rx.head == stim_rx.tail)
            __asm volatile("wfi");
        irq_on();

        /* what the engine's inbox has no room for waits here for the next tick */
        uint8_t byte;
        while (ring_peek(&link_rx, &byte) && jr_engine_receive(&engine, &byte, 1))
            link_rx.tail++;
        serve_stimulus(&arm, &stats, &engine);

        if (ticks_due) {
            irq_off();
            uint32_t due = ticks_due;
            ticks_due = 0;
            irq_on();
            if (due > 1)
                stats.late += due - 1;      /* ticks that came while the last one still ran */
            uint32_t start_ms = ms_count, start = SYST_CVR;
            jr_engine_tick(&engine, now_us());
            uint32_t end_ms = ms_count, end = SYST_CVR;
            /* SysTick counts down, once round per millisecond */
            uint32_t counts = (end_ms - start_ms) * RELOAD + start - end;
            if (counts > stats.worst_counts)
                stats.worst_counts = counts;
            stats.ticks++;
        }
        size_t pending;
        const uint8_t *out = jr_engine_output(&engine, &pending);
        if (pending)
            jr_engine_sent(&engine, uart_send(UART0, out, pending));
    }
}
