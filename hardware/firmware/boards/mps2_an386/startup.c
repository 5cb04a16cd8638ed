/* Reset and the vector table of a Cortex-M4F: copy .data from flash, clear .bss, turn the FPU on,
 * and call main. Only the interrupts the board uses have handlers; any other one stops in
 * `unexpected`, where a debugger finds it. */
#include <stdint.h>

extern uint32_t _data_start, _data_end, _data_load, _bss_start, _bss_end, _stack_top;
extern int main(void);
void reset_handler(void);
void systick_handler(void);
void uart0_rx_handler(void);
void uart1_rx_handler(void);
void uart0_tx_handler(void);
void uart1_tx_handler(void);

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)

static void unexpected(void)
{
    for (;;) {
    }
}

void reset_handler(void)
{
    /* full access to CP10 and CP11 (the FPU) before any floating-point instruction */
    SCB_CPACR |= 0xFu << 20;
    __asm volatile("dsb\n isb" ::: "memory");
    const uint32_t *from = &_data_load;
    for (uint32_t *to = &_data_start; to < &_data_end;)
        *to++ = *from++;
    for (uint32_t *to = &_bss_start; to < &_bss_end;)
        *to++ = 0;
    main();
    unexpected();
}

typedef void (*handler)(void);

/* 16 system exceptions, then the board's interrupts: on the MPS2 (AN386) UART 0 receives on
 * IRQ 0 and sends on IRQ 1, UART 1 on IRQ 2 and 3 */
__attribute__((section(".vectors"), used)) static const handler vectors[16 + 4] = {
    (handler)(uintptr_t)&_stack_top, reset_handler,
    unexpected, unexpected, unexpected, unexpected, unexpected,  /* NMI ... usage fault */
    0, 0, 0, 0,
    unexpected, unexpected, 0, unexpected,                       /* SVC, debug, -, PendSV */
    systick_handler,
    uart0_rx_handler, uart0_tx_handler, uart1_rx_handler, uart1_tx_handler,
};
