/* The engine under the address and undefined-behaviour sanitizers: a session a host would hold
 * (handshake, enable, home, a trajectory to its end), then a million bytes of frames and garbage
 * from a fixed random stream, with the control loop ticking throughout. Whether its answers are
 * right is checked elsewhere (the conformance suite, and tick for tick against the reference in
 * tests/hardware/test_firmware_engine.py); here, that no input makes it touch memory it must not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

static int failures;

#define CHECK(cond) do { if (!(cond)) { failures++; \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)

typedef struct { float q[JR_MAX_JOINTS]; float width; } arm;

static int arm_read(void *ctx, jr_reading *out)
{
    arm *a = ctx;
    memset(out, 0, sizeof *out);
    memcpy(out->q, a->q, sizeof a->q);
    out->gripper_width = a->width;
    return 0;
}

static int arm_joints(void *ctx, const float *q)
{
    memcpy(((arm *)ctx)->q, q, 6 * sizeof(float));
    return 0;
}

static int arm_gripper(void *ctx, float width, float force)
{
    (void)force;
    ((arm *)ctx)->width = width;
    return 0;
}

static jr_engine engine;
static uint64_t now_us;
static uint16_t seq;

static void send(uint8_t type, const uint8_t *body, uint16_t n)
{
    jr_frame f = {.seq = seq++, .type = type, .body_len = n};
    uint8_t wire[JR_MAX_WIRE];
    memcpy(f.body, body, n);
    jr_engine_receive(&engine, wire, jr_frame_encode(&f, wire));
}

static void tick(int n)
{
    for (int i = 0; i < n; i++) {
        now_us += 1000u;
        jr_engine_tick(&engine, now_us);
        jr_engine_sent(&engine, engine.out_len);
    }
}

int main(void)
{
    static arm a;
    jr_config cfg = {.joint_count = 6, .gripper_stroke_m = 0.04f, .force_range_n = 100.0f,
                     .control_hz = 1000, .telemetry_hz = 250, .watchdog_s = 0.2f,
                     .tracking_limit = 0.15f, .homing_speed_scale = 0.2f,
                     .start_tolerance = 0.02f, .presence_hold_s = 0.5f};
    for (int j = 0; j < 6; j++)
        cfg.joints[j] = (jr_joint_info){-3.0f, 3.0f, 1.0f, 0.1f * (float)j};
    jr_hal hal = {&a, arm_read, arm_joints, arm_gripper};
    jr_engine_init(&engine, &cfg, &hal, 1234u, 0u);

    uint8_t body[JR_MAX_BODY];
    body[0] = JR_PROTOCOL_VERSION & 0xFF;
    body[1] = 0;
    send(JR_HELLO, body, 2);
    body[0] = 1;
    send(JR_ENABLE, body, 1);
    send(JR_HOME, body, 0);
    for (int i = 0; i < 3000 && !engine.homed; i++) {
        tick(10);
        send(JR_HEARTBEAT, body, 0);
    }
    CHECK(engine.homed && engine.fault == 0);

    /* a trajectory of 40 points for joint 1, in chunks of 8, then run to its end */
    float start[6];
    memcpy(start, engine.setpoint, sizeof start);
    for (uint16_t index = 0; index < 40; index += 8) {
        uint8_t *p = body;
        p[0] = 1; p[1] = 0;                           /* traj_id 1 */
        p[2] = (uint8_t)index; p[3] = 0;
        p[4] = 40; p[5] = 0;
        p[6] = 8; p[7] = 6;
        p += 8;
        for (int k = 0; k < 8; k++) {
            float v[7] = {0.025f * (float)(index + k)};
            for (int j = 0; j < 6; j++)
                v[1 + j] = start[j] + (j == 0 ? 0.005f * (float)(index + k) : 0.0f);
            memcpy(p, v, sizeof v);               /* the host is little-endian, as the wire */
            p += sizeof v;
        }
        send(JR_TRAJ_LOAD, body, (uint16_t)(p - body));
        tick(1);
    }
    body[0] = 1; body[1] = 0;
    send(JR_TRAJ_RUN, body, 2);
    for (int i = 0; i < 120; i++) {
        tick(10);
        send(JR_HEARTBEAT, body, 0);
    }
    CHECK(engine.motion == -1 && engine.fault == 0);
    CHECK(engine.setpoint[0] > start[0] + 0.19f && engine.setpoint[0] < start[0] + 0.2f);

    /* any bytes at all: frames of random types and bodies, and garbage; and, lest the first bad
     * frame latch a fault that leaves the rest refused, now and then a host putting the device
     * back to work (CLEAR_FAULT, ENABLE, HOME) and random trajectories of the right shape, so
     * that the random frames also meet an arm enabled, homed and moving */
    srand(7);
    int clear_ticks = 0, moving_ticks = 0, total_ticks = 0;
    for (int i = 0; i < 20000; i++) {
        int n = rand() % (int)(JR_MAX_BODY + 1u);
        for (int k = 0; k < n; k++)
            body[k] = (uint8_t)rand();
        int kind = rand() % 16;
        if (kind < 10) {
            send((uint8_t)(rand() % 0x90), body, (uint16_t)n);
        } else if (kind < 13) {
            jr_engine_receive(&engine, body, (size_t)n);
        } else if (kind == 13) {
            /* a delimiter first ends the garbage before (which latches COMM), and HELLO starts
             * the sequence anew after the frames lost in it, as a host would */
            const uint8_t delimiter = 0;
            jr_engine_receive(&engine, &delimiter, 1);
            body[0] = JR_PROTOCOL_VERSION & 0xFF;
            body[1] = 0;
            send(JR_HELLO, body, 2);
            send(JR_CLEAR_FAULT, body, 0);
            body[0] = 1;
            send(JR_ENABLE, body, 1);
            if (!engine.homed && rand() % 4 == 0)
                send(JR_HOME, body, 0);
        } else {
            /* a trajectory of 2-8 points near the set-points, values random or not finite */
            uint8_t count = (uint8_t)(2 + rand() % 7);
            uint16_t id = (uint16_t)(1 + rand() % 3);
            uint8_t *p = body;
            p[0] = (uint8_t)id; p[1] = 0; p[2] = 0; p[3] = 0;
            p[4] = count; p[5] = 0; p[6] = count; p[7] = 6;
            p += 8;
            for (int k = 0; k < count; k++) {
                float v[7] = {0.05f * (float)k};
                for (int j = 0; j < 6; j++)
                    v[1 + j] = engine.setpoint[j]
                               + (float)(rand() % 2001 - 1000) * (k ? 2e-5f : 1e-6f);
                if (rand() % 50 == 0)
                    v[rand() % 7] = (rand() % 2) ? 1e30f : -0.0f;
                memcpy(p, v, sizeof v);
                p += sizeof v;
            }
            send(JR_TRAJ_LOAD, body, (uint16_t)(p - body));
            body[0] = (uint8_t)id; body[1] = 0;
            send(JR_TRAJ_RUN, body, 2);
        }
        int ticks = 1 + rand() % 3;
        for (int t = 0; t < ticks; t++) {
            tick(1);
            total_ticks++;
            clear_ticks += engine.fault == 0;
            moving_ticks += engine.motion != -1;
        }
        if (i % 20 == 0)
            send(JR_HEARTBEAT, body, 0);
    }
    printf("engine: random stream: %d ticks, %d%% with no fault, %d%% moving\n", total_ticks,
           100 * clear_ticks / total_ticks, 100 * moving_ticks / total_ticks);
    /* the stream reached the engine's working states, not only its refusals */
    CHECK(clear_ticks > total_ticks / 10);
    CHECK(moving_ticks > total_ticks / 100);
    CHECK(engine.internal_errors == 0);
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    else
        printf("engine: all checks passed\n");
    return failures != 0;
}
