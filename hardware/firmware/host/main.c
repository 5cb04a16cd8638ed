/* The host build: the firmware's engine serving the protocol on a pseudo-terminal, as a board
 * serves it on its UART, with the simulated arm of sim/arm.h (its wrist reads nothing and its
 * safety input sees nothing: this build has no stimulus channel). It prints `serial: /dev/pts/N`,
 * then runs the control loop at 1 kHz of the monotonic clock until SIGINT or SIGTERM. For a firmware author's bench: the conformance suite reaches it
 * with `--device-url`. (The simulated cell runs the same engine against its MuJoCo arm through
 * hardware/firmware/c_engine.py instead.) */
#define _XOPEN_SOURCE 700
#define _DEFAULT_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "arm.h"
#include "engine.h"

#define TICK_NS 1000000L

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static uint64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static int open_pty(char *name, size_t cap, int *slave)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
        return -1;
    const char *path = ptsname(master);
    if (path == NULL || strlen(path) >= cap)
        return -1;
    strcpy(name, path);
    /* the slave stays open here (a master with no slave open reads EIO), in raw mode: bytes pass
     * untouched, no echo */
    *slave = open(name, O_RDWR | O_NOCTTY);
    struct termios raw;
    if (*slave < 0 || tcgetattr(*slave, &raw) != 0)
        return -1;
    cfmakeraw(&raw);
    if (tcsetattr(*slave, TCSANOW, &raw) != 0)
        return -1;
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    return master;
}

int main(void)
{
    static jr_sim_arm arm;
    static jr_engine engine;
    char name[128];
    int slave = -1;
    int master = open_pty(name, sizeof name, &slave);
    if (master < 0) {
        fprintf(stderr, "cannot open a pseudo-terminal: %s\n", strerror(errno));
        return 1;
    }
    jr_config cfg;
    jr_sim_arm_init(&arm, &cfg, 1000);
    jr_hal hal = jr_sim_arm_hal(&arm);
    struct timespec seed;
    clock_gettime(CLOCK_REALTIME, &seed);
    jr_engine_init(&engine, &cfg, &hal, (uint32_t)(seed.tv_nsec ^ seed.tv_sec), now_us());

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("serial: %s\n", name);
    fflush(stdout);

    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    uint8_t in[512];
    while (!stopping) {
        ssize_t got;
        while ((got = read(master, in, sizeof in)) > 0)
            jr_engine_receive(&engine, in, (size_t)got);
        jr_engine_tick(&engine, now_us());
        size_t pending;
        const uint8_t *out = jr_engine_output(&engine, &pending);
        if (pending) {
            ssize_t sent = write(master, out, pending);
            /* a host that does not read: what does not go is dropped, as from a UART */
            (void)sent;
            jr_engine_sent(&engine, pending);
        }
        next.tv_nsec += TICK_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > next.tv_sec + 1)      /* fell far behind: go on from now */
            next = now;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    close(slave);
    close(master);
    printf("stopped\n");
    return 0;
}
