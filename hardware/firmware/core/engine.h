/* The device side of the protocol (docs/protocol.md), as firmware_bridge/device/engine.py does it:
 * `jr_engine_receive` takes the bytes that arrived, `jr_engine_tick` runs one control period at
 * device time `now_us`, and the bytes to send accumulate in `out` (the board's main loop writes
 * them and calls `jr_engine_sent`). Inside one tick, in order: read the hardware; handle every
 * complete frame; the watchdog; the safety checks; the safety input; motion (the force guard
 * evaluated against this tick's reading before the set-point moves); write the set-points;
 * telemetry when due. No allocation: every buffer is in `jr_engine`. */
#ifndef JR_ENGINE_H
#define JR_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "framing.h"
#include "hal.h"
#include "messages.h"

/* a trajectory's room: (1 + joints) floats a point; two slots (one running, the next uploading)
 * of 2048 floats are 292 points each for a 6-joint arm, 16 KB together */
#ifndef JR_SLOT_FLOATS
#define JR_SLOT_FLOATS 2048u
#endif
#define JR_SLOTS 2u
#define JR_HOMING (-2)
#define JR_INBOX 1024u
#define JR_OUTBOX 2048u
#define JR_TARE_SAMPLES 20u

typedef struct {
    uint8_t joint_count;
    jr_joint_info joints[JR_MAX_JOINTS];
    float gripper_stroke_m, force_range_n;
    uint16_t control_hz, telemetry_hz;
    float watchdog_s, tracking_limit, homing_speed_scale, start_tolerance, presence_hold_s;
} jr_config;

typedef enum {
    JR_SLOT_FREE = 0, JR_SLOT_UPLOADING, JR_SLOT_LOADED, /* checked: runnable by its id */
    JR_SLOT_RETIRED                                       /* running, but its id was loaded anew */
} jr_slot_state;

typedef struct {
    uint8_t state;          /* jr_slot_state */
    uint16_t traj_id;
    uint16_t total, received;
    uint32_t age;           /* when last started, to reuse the oldest slot */
    float data[JR_SLOT_FLOATS];   /* per point: t, then q[joints] */
} jr_slot;

typedef struct {
    jr_config cfg;
    jr_hal hal;
    uint32_t boot_id;
    uint64_t boot_us, now_us;
    jr_decoder decoder;
    uint8_t inbox[JR_INBOX];
    size_t inbox_len;
    uint8_t out[JR_OUTBOX];
    size_t out_len;
    uint16_t tx_seq;
    uint8_t handshaken, watchdog_armed, enabled, homed, homing;
    uint16_t fault;
    int32_t last_seq;            /* -1: none */
    uint8_t last_reply[JR_MAX_BODY];
    size_t last_reply_len;
    uint8_t last_reply_type, has_last_reply;
    uint64_t last_rx_us;
    uint8_t has_last_rx;
    jr_slot slots[JR_SLOTS];
    int motion;                  /* the slot that runs, -1 none, JR_HOMING homing */
    float home_from[JR_MAX_JOINTS];
    double home_span_s;          /* HOME's cosine profile from home_from to the home pose */
    uint32_t uploads;            /* counts slot starts */
    double motion_elapsed;       /* trajectory time reached (s); a double, as a sum of ticks */
    uint64_t motion_clock_us;
    float rate;
    uint8_t presence_held;
    uint64_t presence_seen_us;
    uint8_t presence_ever;
    uint8_t guard_enabled, guard_tripped;
    float guard_direction[3], guard_threshold_n;
    float tare[6];
    float recent[JR_TARE_SAMPLES][6];
    unsigned recent_count, recent_next;
    uint8_t gripper_moving;
    float gripper_target, gripper_force, gripper_last_width;
    uint64_t gripper_last_us;
    float setpoint[JR_MAX_JOINTS];
    jr_reading state;
    uint32_t ticks, telemetry_every;
    uint32_t frames_ok, frames_corrupt, frames_dropped, commands_executed, duplicates;
    uint32_t internal_errors;
} jr_engine;

void jr_engine_init(jr_engine *e, const jr_config *cfg, const jr_hal *hal, uint32_t boot_id,
                    uint64_t now_us);
void jr_engine_boot(jr_engine *e, uint32_t boot_id, uint64_t now_us);
/* Bytes that arrived; returns how many were taken (what does not fit the inbox waits with the
 * caller, who may push back, or is lost as a UART's overrun loses it). Call it between ticks,
 * not from an interrupt while a tick runs. */
size_t jr_engine_receive(jr_engine *e, const uint8_t *data, size_t n);
void jr_engine_tick(jr_engine *e, uint64_t now_us);
/* the link without a control tick: for a device whose world stands still a moment */
void jr_engine_serve_link(jr_engine *e, uint64_t now_us);
/* the first `n` bytes of `out` were sent */
void jr_engine_sent(jr_engine *e, size_t n);
/* the points a trajectory may have on this arm */
uint16_t jr_engine_max_points(const jr_engine *e);
/* for a host that holds the engine by a handle (the simulated cell, the tests) */
size_t jr_engine_size(void);
const uint8_t *jr_engine_output(const jr_engine *e, size_t *n);
uint16_t jr_engine_fault(const jr_engine *e);
uint32_t jr_engine_internal_errors(const jr_engine *e);
void jr_engine_setpoint(const jr_engine *e, float *out);

#endif
