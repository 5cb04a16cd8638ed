#include "board.h"

#define RELOAD (BOARD_CPU_HZ / BOARD_CONTROL_HZ)   /* SysTick counts per control tick */
#define PROTOCOL_BAUD 1000000u
#define BENCH_BAUD 1000000u

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
#define CTRL_TX_IRQ 4u
#define CTRL_RX_IRQ 8u
#define INT_TX 1u
#define INT_RX 2u

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define ICSR_PENDSTSET (1u << 26)
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define IRQ_UART0_RX 0u
#define IRQ_UART0_TX 1u
#define IRQ_UART1_RX 2u
#define IRQ_UART1_TX 3u

board_ring board_link_rx, board_bench_rx;
volatile uint32_t board_ticks_due;
/* 64 bits: device time must not wrap (32 bits of milliseconds would after 49.7 days) */
static volatile uint64_t ms_count;

void systick_handler(void);
void uart0_rx_handler(void);
void uart1_rx_handler(void);
void uart0_tx_handler(void);
void uart1_tx_handler(void);

static void irq_off(void) { __asm volatile("cpsid i" ::: "memory"); }
static void irq_on(void) { __asm volatile("cpsie i" ::: "memory"); }

static void ring_put(board_ring *r, uint8_t byte)
{
    uint32_t head = r->head;
    if (head - r->tail >= sizeof r->data) {
        r->overruns++;            /* as a UART's overrun: the byte is lost, the CRC catches it */
        return;
    }
    r->data[head % sizeof r->data] = byte;
    r->head = head + 1;
}

int board_ring_peek(const board_ring *r, uint8_t *byte)
{
    if (r->tail == r->head)
        return 0;
    *byte = r->data[r->tail % sizeof r->data];
    return 1;
}

void board_ring_pop(board_ring *r) { r->tail = r->tail + 1; }

int board_ring_empty(const board_ring *r) { return r->tail == r->head; }

static void uart_receive(cmsdk_uart *u, board_ring *r)
{
    u->intstatus = INT_RX;
    while (u->state & STATE_RX_FULL)
        ring_put(r, (uint8_t)u->data);
}

void uart0_rx_handler(void) { uart_receive(UART0, &board_link_rx); }
void uart1_rx_handler(void) { uart_receive(UART1, &board_bench_rx); }
/* a byte went: the transmitter has room again; the interrupt only wakes the main loop */
void uart0_tx_handler(void) { UART0->intstatus = INT_TX; }
void uart1_tx_handler(void) { UART1->intstatus = INT_TX; }

void systick_handler(void)
{
    ms_count = ms_count + 1;
    board_ticks_due = board_ticks_due + 1;
}

static void uart_init(cmsdk_uart *u, uint32_t baud)
{
    u->bauddiv = BOARD_CPU_HZ / baud;
    u->ctrl = CTRL_TX_EN | CTRL_RX_EN | CTRL_RX_IRQ | CTRL_TX_IRQ;
}

void board_init(void)
{
    uart_init(UART0, PROTOCOL_BAUD);
    uart_init(UART1, BENCH_BAUD);
    NVIC_ISER0 = (1u << IRQ_UART0_RX) | (1u << IRQ_UART0_TX) | (1u << IRQ_UART1_RX)
                 | (1u << IRQ_UART1_TX);
    SYST_RVR = RELOAD - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u;                      /* the processor clock, interrupt, on */
}

int board_link_ready(void) { return !(UART0->state & STATE_TX_FULL); }

void board_link_put(uint8_t byte) { UART0->data = byte; }

size_t board_bench_send(const uint8_t *data, size_t n)
{
    size_t sent = 0;
    while (sent < n && !(UART1->state & STATE_TX_FULL))
        UART1->data = data[sent++];
    return sent;
}

/* The tick count and the counter within the tick, read together. The counter runs down and the
 * interrupt counts a tick each time round; between the counter's reload and its interrupt being
 * taken the count is one tick behind, which the pending bit tells (a reading from just before
 * the reload is low, one from just after it high). */
uint64_t board_counts(void)
{
    static uint64_t last;           /* the main loop is its only caller */
    uint64_t ms;
    uint32_t count, pending;
    do {
        ms = ms_count;
        count = SYST_CVR;
        pending = SCB_ICSR & ICSR_PENDSTSET;
    } while (ms != ms_count);
    if (pending && count > RELOAD / 2u)
        ms++;
    uint64_t now = ms * RELOAD + (RELOAD - 1u - count);
    /* QEMU's SysTick can show the reloaded counter before it sets the pending bit (its timer
     * runs on the next translation block): such a reading is a tick behind the last one, and a
     * tick timed across it came out as 2^64 counts less a few (the link bench's worst tick,
     * clamped to 2^32 - 1 ns, on a loaded machine). The clock never runs back. */
    if (now < last)
        now = last;
    last = now;
    return now;
}

uint64_t board_now_us(void) { return board_counts() / BOARD_COUNTS_PER_US; }

void board_sleep(int link_to_send, int bench_to_send)
{
    irq_off();
    /* a byte that goes, arrives or a tick between this check and WFI leaves its interrupt
     * pending, which ends the WFI at once */
    int work = board_ticks_due || !board_ring_empty(&board_link_rx)
               || !board_ring_empty(&board_bench_rx)
               || (link_to_send && !(UART0->state & STATE_TX_FULL))
               || (bench_to_send && !(UART1->state & STATE_TX_FULL));
    if (!work)
        __asm volatile("wfi");
    irq_on();
}

uint32_t board_take_ticks_due(void)
{
    irq_off();
    uint32_t due = board_ticks_due;
    board_ticks_due = 0;
    irq_on();
    return due;
}

/* Boots counted across resets, and a seed, in RAM a reset leaves alone (link.ld .noinit). The
 * seed is the power-up's entropy: here the bench writes a random one before the board starts
 * (hardware/firmware/qemu.py); a real board takes it from its random number generator or mixes
 * its unique id with a counter in flash. A cold start finds garbage in the record, which the
 * check word tells. */
typedef struct {
    uint32_t seed, check, boots;
} boot_record;

__attribute__((section(".noinit"), used)) static boot_record boot_record_ram;

static uint32_t mix(uint32_t h)
{
    /* MurmurHash3's finalizer: every bit of the input moves about half of the output's */
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

uint32_t board_boot_id(void)
{
    boot_record *r = &boot_record_ram;
    if (r->check != (r->seed ^ ~r->boots))
        r->boots = 0;
    r->boots++;
    r->check = r->seed ^ ~r->boots;
    return mix(r->seed ^ mix(r->boots));
}
