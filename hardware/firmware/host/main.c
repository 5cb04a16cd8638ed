/* The host build: the firmware's engine serving the protocol on a pseudo-terminal, as a board
 * serves it on its UART, with a simulated arm of its own (joints that follow their set-points
 * with a 5 ms lag, a gripper at 0.1 m/s, a wrist that reads nothing, a safety input that sees
 * nothing). It prints `serial: /dev/pts/N`, then runs the control loop at 1 kHz of the monotonic
 * clock until SIGINT or SIGTERM. For a firmware author's bench: the conformance suite reaches it
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

#include "engine.h"

#define JOINTS 6
#define TICK_NS 1000000L
#define LAG_S 0.005f
#define GRIPPER_SPEED 0.1f

typedef struct {
    float q[JOINTS], qd[JOINTS], target[JOINTS];
    float width, width_target;
} arm;

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

static int arm_read(void *ctx, jr_reading *out)
{
    const arm *a = ctx;
    memset(out, 0, sizeof *out);
    memcpy(out->q, a->q, sizeof a->q);
    memcpy(out->qd, a->qd, sizeof a->qd);
    out->gripper_width = a->width;
    return 0;
}

static int arm_joints(void *ctx, const float *q)
{
    arm *a = ctx;
    const float alpha = 0.001f / LAG_S, dt = 0.001f;
    for (int j = 0; j < JOINTS; j++) {
        float before = a->q[j];
        a->target[j] = q[j];
        a->q[j] += alpha * (q[j] - a->q[j]);
        a->qd[j] = (a->q[j] - before) / dt;
    }
    float step = GRIPPER_SPEED * dt, gap = a->width_target - a->width;
    a->width += gap > step ? step : gap < -step ? -step : gap;
    return 0;
}

static int arm_gripper(void *ctx, float width, float force)
{
    (void)force;
    ((arm *)ctx)->width_target = width;
    return 0;
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
    static arm a;
    static jr_engine engine;
    char name[128];
    int slave = -1;
    int master = open_pty(name, sizeof name, &slave);
    if (master < 0) {
        fprintf(stderr, "cannot open a pseudo-terminal: %s\n", strerror(errno));
        return 1;
    }
    jr_config cfg = {.joint_count = JOINTS, .gripper_stroke_m = 0.04f, .force_range_n = 100.0f,
                     .control_hz = 1000, .telemetry_hz = 250, .watchdog_s = 0.2f,
                     .tracking_limit = 0.15f, .homing_speed_scale = 0.2f,
                     .start_tolerance = 0.02f, .presence_hold_s = 0.5f};
    for (int j = 0; j < JOINTS; j++) {
        cfg.joints[j] = (jr_joint_info){-3.0f, 3.0f, 1.0f, 0.1f * (float)j};
        a.q[j] = a.target[j] = 0.1f * (float)j;
    }
    jr_hal hal = {&a, arm_read, arm_joints, arm_gripper};
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
