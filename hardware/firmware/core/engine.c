#include "engine.h"

#include <math.h>
#include <string.h>

#include "wire.h"

#define FIRMWARE_MAJOR 2u
#define FIRMWARE_MINOR 0u
#define FIRMWARE_PATCH 0u
#define F32_MAX 3.4028234663852886e38
/* as the reference engine: the gripper is judged every 50 ms; within 0.5 mm of its target it has
 * reached it, moved less than 0.2 mm since it has stopped (closed on an object) */
#define GRIPPER_SETTLE_S 0.05
#define GRIPPER_REACHED_M 0.0005f
#define GRIPPER_STALLED_M 0.0002f

enum { ST_HANDSHAKEN = 0x001, ST_ENABLED = 0x002, ST_HOMED = 0x004, ST_MOVING = 0x008,
       ST_HOMING = 0x010, ST_GUARD_ARMED = 0x020, ST_GUARD_TRIPPED = 0x040, ST_FAULT = 0x080,
       ST_GRIPPER_MOVING = 0x100, ST_PAUSED = 0x200, ST_SLOWED = 0x400, ST_PRESENCE = 0x800 };
enum { F_WATCHDOG = 0x01, F_ESTOP = 0x02, F_COMM = 0x04, F_TRACKING = 0x08, F_LIMIT = 0x10,
       F_OVERLOAD = 0x20, F_INTERNAL = 0x40 };
enum { EV_TRAJ_DONE = 1, EV_GUARD_TRIPPED = 2, EV_FAULT = 3, EV_HOMED = 4, EV_STOPPED = 5,
       EV_BOOT = 6, EV_GRIPPER_DONE = 7 };

/* seconds from device time `then` to now; none if the clock stepped back (a timer badly widened,
 * a host's clock): a wait must never end, nor a motion leap, because time ran backwards */
static double since(const jr_engine *e, uint64_t then)
{
    return e->now_us > then ? (double)(e->now_us - then) * 1e-6 : 0.0;
}

static void internal_error(jr_engine *e);

static uint64_t device_us(const jr_engine *e)
{
    return e->now_us > e->boot_us ? e->now_us - e->boot_us : 0u;
}

/* --- output ------------------------------------------------------------------------------- */

static void emit(jr_engine *e, uint8_t type, const uint8_t *body, size_t n)
{
    jr_frame frame;
    uint8_t wire[JR_MAX_WIRE];
    frame.seq = e->tx_seq;
    frame.type = type;
    frame.body_len = (uint16_t)n;
    memcpy(frame.body, body, n);
    size_t len = jr_frame_encode(&frame, wire);
    /* a frame that does not fit (a host that does not read) is lost as from a UART, but keeps
     * its number: the host sees the gap */
    e->tx_seq = (uint16_t)(e->tx_seq + 1u);
    if (len == 0 || e->out_len + len > JR_OUTBOX) {
        e->frames_dropped++;
        return;
    }
    memcpy(e->out + e->out_len, wire, len);
    e->out_len += len;
}

static void event(jr_engine *e, uint8_t kind, uint16_t traj_id, uint16_t code, float value)
{
    jr_event ev = {kind, device_us(e), traj_id, code, value};
    uint8_t body[JR_MAX_BODY];
    emit(e, JR_EVENT, body, jr_event_pack(&ev, body));
}

static void reply(jr_engine *e, uint8_t type, const uint8_t *body, size_t n, int remember)
{
    emit(e, type, body, n);
    if (remember && n <= sizeof e->last_reply) {
        memcpy(e->last_reply, body, n);
        e->last_reply_len = n;
        e->last_reply_type = type;
        e->has_last_reply = 1;
    }
}

static void ack(jr_engine *e, uint16_t seq)
{
    uint8_t body[4];
    reply(e, JR_ACK, body, jr_ack_pack(seq, body), 1);
}

static void nak(jr_engine *e, uint16_t seq, uint8_t reason, int remember)
{
    uint8_t body[4];
    reply(e, JR_NAK, body, jr_nak_pack(seq, reason, body), remember);
}

/* --- helpers ------------------------------------------------------------------------------ */

static unsigned joints(const jr_engine *e) { return e->cfg.joint_count; }

static float pace(const jr_engine *e) { return e->presence_held ? 0.0f : e->rate; }

static void tared(const jr_engine *e, float out[6])
{
    for (int i = 0; i < 6; i++)
        out[i] = e->state.wrench[i] - e->tare[i];
}

static void latch(jr_engine *e, uint16_t fault)
{
    if (e->fault & fault)
        return;
    e->fault = (uint16_t)(e->fault | fault);
    e->motion = -1;
    e->homing = 0;
    if (fault == F_TRACKING)     /* stop fighting whatever blocks the arm */
        memcpy(e->setpoint, e->state.q, sizeof e->setpoint);
    event(e, EV_FAULT, 0, fault, 0.0f);
}

static void hold(jr_engine *e, int with_event)
{
    uint16_t traj_id = e->motion >= 0 ? e->slots[e->motion].traj_id : 0;
    e->motion = -1;
    e->homing = 0;
    if (with_event)
        event(e, EV_STOPPED, traj_id, 0, 0.0f);
}

/* --- trajectories ------------------------------------------------------------------------- */

uint16_t jr_engine_max_points(const jr_engine *e)
{
    unsigned n = JR_SLOT_FLOATS / (joints(e) + 1u);
    return (uint16_t)(n > 0xFFFFu ? 0xFFFFu : n);
}

static float *point(jr_slot *s, unsigned i, unsigned n_joints) { return s->data + i * (n_joints + 1u); }

static int find_slot(const jr_engine *e, uint16_t traj_id, uint8_t state)
{
    for (unsigned i = 0; i < JR_SLOTS; i++)
        if (e->slots[i].state == state && e->slots[i].traj_id == traj_id)
            return (int)i;
    return -1;
}

/* no upload and no trajectory of this id any more (one that runs runs on, retired) */
static void forget(jr_engine *e, uint16_t traj_id)
{
    for (unsigned i = 0; i < JR_SLOTS; i++) {
        jr_slot *s = &e->slots[i];
        if (s->state == JR_SLOT_FREE || s->traj_id != traj_id)
            continue;
        s->state = (uint8_t)((int)i == e->motion ? JR_SLOT_RETIRED : JR_SLOT_FREE);
    }
}

/* a slot for a new upload: a free one, or the oldest that does not run */
static int new_slot(jr_engine *e)
{
    int best = -1;
    for (unsigned i = 0; i < JR_SLOTS; i++) {
        if ((int)i == e->motion)
            continue;
        /* free, or retired and no longer running */
        if (e->slots[i].state == JR_SLOT_FREE || e->slots[i].state == JR_SLOT_RETIRED)
            return (int)i;
        if (best < 0 || e->slots[i].age < e->slots[best].age)
            best = (int)i;
    }
    return best;
}

static uint8_t check(jr_engine *e, jr_slot *s)
{
    unsigned n = joints(e);
    if (fabsf(point(s, 0, n)[0]) > 1e-6f)
        return JR_BAD_TRAJECTORY;
    for (unsigned i = 1; i < s->total; i++)
        if (!(point(s, i, n)[0] > point(s, i - 1, n)[0]))
            return JR_BAD_TRAJECTORY;
    for (unsigned i = 0; i < s->total; i++)
        for (unsigned j = 0; j < n; j++) {
            float q = point(s, i, n)[1 + j];
            if (q < e->cfg.joints[j].q_min - 1e-4f || q > e->cfg.joints[j].q_max + 1e-4f)
                return JR_LIMIT;
        }
    for (unsigned i = 1; i < s->total; i++) {
        float dt = point(s, i, n)[0] - point(s, i - 1, n)[0];
        for (unsigned j = 0; j < n; j++) {
            float v = fabsf(point(s, i, n)[1 + j] - point(s, i - 1, n)[1 + j]) / dt;
            if (v > e->cfg.joints[j].speed_max * 1.01f + 1e-6f)   /* f32 rounding */
                return JR_LIMIT;
        }
    }
    return 0;
}

static uint8_t load(jr_engine *e, const jr_traj_load *c)
{
    unsigned n = joints(e);
    if (c->index == 0)
        forget(e, c->traj_id);       /* a new upload of this id, good or not */
    int uploading = find_slot(e, c->traj_id, JR_SLOT_UPLOADING);
    if (c->total < 2 || c->total > jr_engine_max_points(e) || c->joints != n ||
        (unsigned)c->index + c->count > c->total) {
        /* too long, for another arm, or past its end: this upload goes, a loaded one stays */
        if (uploading >= 0)
            e->slots[uploading].state = JR_SLOT_FREE;
        return JR_BAD_TRAJECTORY;
    }
    int i = c->index == 0 ? new_slot(e) : uploading;
    if (i < 0)
        return JR_BAD_TRAJECTORY;
    jr_slot *s = &e->slots[i];
    if (c->index == 0) {
        memset(s, 0, offsetof(jr_slot, data));
        s->state = JR_SLOT_UPLOADING;
        s->traj_id = c->traj_id;
        s->total = c->total;
        s->age = ++e->uploads;
    }
    if (c->index != s->received || c->total != s->total) {
        s->state = JR_SLOT_FREE;
        return JR_BAD_TRAJECTORY;
    }
    for (unsigned k = 0; k < c->count; k++) {
        float *p = point(s, s->received + k, n);
        p[0] = c->t[k];
        memcpy(p + 1, c->q[k], n * sizeof(float));
    }
    s->received = (uint16_t)(s->received + c->count);
    if (s->received == s->total) {
        uint8_t why = check(e, s);
        s->state = why ? JR_SLOT_FREE : JR_SLOT_LOADED;
        if (why)
            return why;
    }
    return 0;
}

static void start(jr_engine *e, int motion)
{
    e->motion = motion;
    e->motion_elapsed = 0.0;
    e->motion_clock_us = e->now_us;
}

static uint8_t run(jr_engine *e, uint16_t traj_id)
{
    if (!e->homed)
        return JR_NOT_HOMED;
    int i = find_slot(e, traj_id, JR_SLOT_LOADED);
    if (i < 0)
        return JR_BAD_TRAJECTORY;
    float *first = point(&e->slots[i], 0, joints(e));
    for (unsigned j = 0; j < joints(e); j++)
        if (fabsf(first[1 + j] - e->setpoint[j]) > e->cfg.start_tolerance)
            return JR_START_MISMATCH;
    e->slots[i].age = ++e->uploads;
    start(e, i);
    e->guard_tripped = 0;
    return 0;
}

static void home(jr_engine *e)
{
    /* one cosine profile for every joint, timed so no joint's peak exceeds its share of its
     * own limit: the peak of a cosine profile is pi/2 times its mean speed */
    double span = 0.05;
    for (unsigned j = 0; j < joints(e); j++) {
        double speed = (double)e->cfg.joints[j].speed_max * (double)e->cfg.homing_speed_scale;
        double need = fabs((double)e->cfg.joints[j].q_home - (double)e->setpoint[j]) / speed *
                      1.5707963267948966;
        if (need > span)
            span = need;
    }
    memcpy(e->home_from, e->setpoint, sizeof e->home_from);
    e->home_span_s = span;
    e->homing = 1;
    start(e, JR_HOMING);
}

/* where the running motion puts the set-point `t` seconds in; whether it has ended */
static int target(jr_engine *e, double t, float *out)
{
    unsigned n = joints(e);
    if (e->motion == JR_HOMING) {
        float s = t >= e->home_span_s ? 1.0f
                  : (float)((1.0 - cos(3.141592653589793 * t / e->home_span_s)) / 2.0);
        for (unsigned j = 0; j < n; j++)
            out[j] = e->home_from[j] + s * (e->cfg.joints[j].q_home - e->home_from[j]);
        return t >= e->home_span_s;
    }
    jr_slot *sl = &e->slots[e->motion];
    unsigned last = sl->total - 1u;
    if (t <= 0.0) {
        memcpy(out, point(sl, 0, n) + 1, n * sizeof(float));
        return 0;
    }
    if (t >= (double)point(sl, last, n)[0]) {
        memcpy(out, point(sl, last, n) + 1, n * sizeof(float));
        return 1;
    }
    unsigned i = 0;
    while (i + 1u < last && (double)point(sl, i + 1u, n)[0] <= t)
        i++;
    float *a = point(sl, i, n), *b = point(sl, i + 1u, n);
    float f = (float)((t - (double)a[0]) / ((double)b[0] - (double)a[0]));
    for (unsigned j = 0; j < n; j++)
        out[j] = a[1 + j] + f * (b[1 + j] - a[1 + j]);
    return 0;
}

static void advance_motion(jr_engine *e)
{
    if (e->motion == -1)
        return;
    if (!e->homing && e->guard_enabled) {
        float w[6];
        tared(e, w);
        float force = w[0] * e->guard_direction[0] + w[1] * e->guard_direction[1] +
                      w[2] * e->guard_direction[2];
        if (force > e->guard_threshold_n) {
            /* stop in this very tick: the set-point stays where it was last tick */
            e->guard_tripped = 1;
            event(e, EV_GUARD_TRIPPED, e->slots[e->motion].traj_id, 0, force);
            e->motion = -1;
            return;
        }
    }
    e->motion_elapsed += since(e, e->motion_clock_us) * (double)pace(e);
    e->motion_clock_us = e->now_us;
    if (target(e, e->motion_elapsed, e->setpoint)) {
        if (e->homing) {
            e->homing = 0;
            e->homed = 1;
            event(e, EV_HOMED, 0, 0, 0.0f);
        } else {
            event(e, EV_TRAJ_DONE, e->slots[e->motion].traj_id, 0, 0.0f);
        }
        e->motion = -1;
    }
}

/* what sets the pace changes: time so far counts at the old pace (this tick's too, unless not
 * `count_tick`); stopping holds the fingers where they are, going on sends them on */
static void change_pace(jr_engine *e, float new_rate, int new_held, int count_tick)
{
    float before = pace(e);
    if (e->motion != -1) {
        if (count_tick)
            e->motion_elapsed += since(e, e->motion_clock_us) * (double)before;
        e->motion_clock_us = e->now_us;
    }
    e->rate = new_rate;
    e->presence_held = (uint8_t)new_held;
    float after = pace(e);
    if (e->gripper_moving && (after == 0.0f) != (before == 0.0f)) {
        float width = after == 0.0f ? e->state.gripper_width : e->gripper_target;
        if (e->hal.command_gripper(e->hal.ctx, width, e->gripper_force) != 0)
            internal_error(e);
        e->gripper_last_us = e->now_us;
        e->gripper_last_width = e->state.gripper_width;
    }
}

static void presence(jr_engine *e)
{
    if (e->state.presence) {
        e->presence_seen_us = e->now_us;
        e->presence_ever = 1;
    }
    int held = e->presence_ever &&
               since(e, e->presence_seen_us) < (double)e->cfg.presence_hold_s;
    if (held != e->presence_held)   /* a hold starts with this tick's set-point as the last */
        change_pace(e, e->rate, held, !held);
}

static void advance_gripper(jr_engine *e)
{
    if (!e->gripper_moving || pace(e) == 0.0f)
        return;
    float width = e->state.gripper_width;
    int reached = fabsf(width - e->gripper_target) < GRIPPER_REACHED_M;
    if (since(e, e->gripper_last_us) >= GRIPPER_SETTLE_S) {
        /* closed on an object when the fingers stopped moving short of the target */
        int stalled = fabsf(width - e->gripper_last_width) < GRIPPER_STALLED_M;
        e->gripper_last_us = e->now_us;
        e->gripper_last_width = width;
        if (stalled || reached) {
            e->gripper_moving = 0;
            event(e, EV_GRIPPER_DONE, 0, 0, width);
        }
    }
}

static void safety(jr_engine *e)
{
    for (int i = 0; i < 3; i++)
        if (fabsf(e->state.wrench[i] - e->tare[i]) > e->cfg.force_range_n)
            latch(e, F_OVERLOAD);
    for (unsigned j = 0; j < joints(e); j++)
        if (fabsf(e->state.q[j] - e->setpoint[j]) > e->cfg.tracking_limit)
            latch(e, F_TRACKING);
    for (unsigned j = 0; j < joints(e); j++)
        if (e->state.q[j] < e->cfg.joints[j].q_min - 0.01f ||
            e->state.q[j] > e->cfg.joints[j].q_max + 0.01f)
            latch(e, F_LIMIT);
}

/* --- commands ----------------------------------------------------------------------------- */

static void hello(jr_engine *e, uint16_t seq, uint16_t version)
{
    if (e->motion != -1)    /* a host starting over takes the arm standing */
        hold(e, 1);
    e->handshaken = version == JR_PROTOCOL_VERSION;
    e->watchdog_armed = (uint8_t)(e->watchdog_armed || e->handshaken);
    e->last_seq = seq;
    e->last_rx_us = e->now_us;
    e->has_last_rx = 1;
    jr_hello_reply r;
    memset(&r, 0, sizeof r);
    r.cmd_seq = seq;
    r.protocol_version = JR_PROTOCOL_VERSION;
    r.firmware_version[0] = FIRMWARE_MAJOR;
    r.firmware_version[1] = FIRMWARE_MINOR;
    r.firmware_version[2] = FIRMWARE_PATCH;
    r.boot_id = e->boot_id;
    r.control_hz = e->cfg.control_hz;
    r.telemetry_hz = e->cfg.telemetry_hz;
    r.max_points = jr_engine_max_points(e);
    r.gripper_stroke_m = e->cfg.gripper_stroke_m;
    r.force_range_n = e->cfg.force_range_n;
    r.joint_count = e->cfg.joint_count;
    memcpy(r.joints, e->cfg.joints, sizeof r.joints);
    uint8_t body[JR_MAX_BODY];
    reply(e, JR_HELLO_REPLY, body, jr_hello_reply_pack(&r, body), 1);
}

static uint8_t set_guard(jr_engine *e, const jr_command *c)
{
    if (c->u.guard.enabled) {
        const float *d = c->u.guard.direction;
        /* in double, as the reference: a direction of norm 1.99999998 is taken, not rounded */
        double norm = sqrt((double)d[0] * (double)d[0] + (double)d[1] * (double)d[1] +
                           (double)d[2] * (double)d[2]);
        if (!(norm > 0.5 && norm < 2.0) || !(c->u.guard.threshold_n > 0.0f))
            return JR_MALFORMED;
        for (int i = 0; i < 3; i++)
            e->guard_direction[i] = (float)((double)d[i] / norm);
        e->guard_threshold_n = c->u.guard.threshold_n;
    }
    e->guard_enabled = c->u.guard.enabled;
    return 0;
}

static uint8_t clear_fault(jr_engine *e)
{
    if (!e->fault)
        return 0;
    float w[6];
    tared(e, w);
    if (sqrt((double)w[0] * (double)w[0] + (double)w[1] * (double)w[1] +
             (double)w[2] * (double)w[2]) >
        (double)e->cfg.force_range_n)
        return JR_FAULT_ACTIVE;
    e->fault = 0;
    e->homed = 0;     /* positions may have been disturbed: re-home before moving */
    e->last_rx_us = e->now_us;
    return 0;
}

/* an in-sequence command: the reason it was refused, or 0 */
static uint8_t execute(jr_engine *e, const jr_command *c)
{
    switch (c->type) {
    case JR_HEARTBEAT:
        return 0;
    case JR_ESTOP:
        latch(e, F_ESTOP);
        return 0;
    case JR_STOP:
        if (e->motion != -1)
            hold(e, 1);
        return 0;
    case JR_CLEAR_FAULT:
        return clear_fault(e);
    case JR_TARE:
        if (e->recent_count) {
            for (int i = 0; i < 6; i++) {
                double sum = 0.0;
                for (unsigned k = 0; k < e->recent_count; k++)
                    sum += (double)e->recent[k][i];
                e->tare[i] = (float)(sum / e->recent_count);
            }
        }
        return 0;
    case JR_GUARD:
        return set_guard(e, c);
    case JR_RATE:
        change_pace(e, c->u.scale, e->presence_held, 1);
        return 0;
    case JR_TRAJ_LOAD:
        return load(e, &c->u.load);
    case JR_ENABLE:
        if (!c->u.on)
            hold(e, e->motion != -1);
        e->enabled = c->u.on;
        return 0;
    default:
        break;
    }
    /* everything below moves something */
    if (e->fault)
        return JR_FAULT_LATCHED;
    if (!e->enabled)
        return JR_NOT_ENABLED;
    if (c->type == JR_GRIPPER) {
        if (!(c->u.gripper.width_m >= 0.0f && c->u.gripper.width_m <= e->cfg.gripper_stroke_m + 1e-6f)
            || c->u.gripper.force_n < 0.0f)
            return JR_MALFORMED;
        e->gripper_moving = 1;
        e->gripper_target = c->u.gripper.width_m;
        e->gripper_force = c->u.gripper.force_n;
        e->gripper_last_us = e->now_us;
        e->gripper_last_width = e->state.gripper_width;
        if (pace(e) > 0.0f &&
            e->hal.command_gripper(e->hal.ctx, c->u.gripper.width_m, c->u.gripper.force_n) != 0)
            internal_error(e);
        return 0;
    }
    if (e->motion != -1)
        return JR_BUSY;
    if (c->type == JR_HOME) {
        home(e);
        return 0;
    }
    if (c->type == JR_TRAJ_RUN)
        return run(e, c->u.traj_id);
    return JR_UNKNOWN_TYPE;
}

static void handle(jr_engine *e, const jr_frame *f)
{
    if (f->type >= 0x80)
        return;     /* not a command: ignore what a host should never send */
    jr_command c;
    int read = jr_command_decode(f->type, f->body, f->body_len, &c);
    uint8_t refused = 0;
    if (read == JR_NOT_FINITE) {
        if (c.type == JR_TRAJ_LOAD)
            forget(e, c.u.load.traj_id);      /* no half of it stays runnable */
        refused = JR_MALFORMED;
    } else if (read > 0) {
        refused = (uint8_t)read;
    }
    if (!refused && c.type == JR_HELLO) {
        hello(e, f->seq, c.u.protocol_version);
        return;
    }
    if (!e->handshaken) {
        nak(e, f->seq, refused ? refused : JR_NO_HANDSHAKE, 0);
        return;
    }
    if ((int32_t)f->seq == e->last_seq) {
        /* the host did not hear our answer and sent the same again: answer again, run nothing */
        e->duplicates++;
        if (e->has_last_reply)
            emit(e, e->last_reply_type, e->last_reply, e->last_reply_len);
        return;
    }
    if (f->seq != (uint16_t)(e->last_seq + 1)) {
        nak(e, f->seq, JR_OUT_OF_SEQUENCE, 0);
        return;
    }
    /* an in-sequence command uses up its number whether it runs or is refused */
    e->last_seq = f->seq;
    if (refused) {
        nak(e, f->seq, refused, 1);
        return;
    }
    uint8_t why = execute(e, &c);
    e->commands_executed++;
    if (why)
        nak(e, f->seq, why, 1);
    else
        ack(e, f->seq);
}

static void read_commands(jr_engine *e)
{
    jr_frame frame;
    for (size_t i = 0; i < e->inbox_len; i++) {
        jr_decoded got = jr_decoder_push(&e->decoder, e->inbox[i], &frame);
        if (got == JR_GOT_CORRUPT) {
            e->frames_corrupt++;
            if (e->handshaken)
                latch(e, F_COMM);
        } else if (got == JR_GOT_FRAME) {
            e->frames_ok++;
            e->last_rx_us = e->now_us;
            e->has_last_rx = 1;
            handle(e, &frame);
        }
    }
    e->inbox_len = 0;
}

/* --- the tick ----------------------------------------------------------------------------- */

static int read_hardware(jr_engine *e)
{
    jr_reading r;
    if (e->hal.read(e->hal.ctx, &r) != 0)
        return -1;
    float values[2 * JR_MAX_JOINTS + 7];
    unsigned n = 0;
    for (unsigned j = 0; j < joints(e); j++) {
        values[n++] = r.q[j];
        values[n++] = r.qd[j];
    }
    for (int i = 0; i < 6; i++)
        values[n++] = r.wrench[i];
    values[n++] = r.gripper_width;
    for (unsigned i = 0; i < n; i++)
        if (!(fabsf(values[i]) <= (float)F32_MAX))      /* also false for NaN */
            return -1;
    e->state = r;
    memcpy(e->recent[e->recent_next], r.wrench, sizeof r.wrench);
    e->recent_next = (e->recent_next + 1u) % JR_TARE_SAMPLES;
    if (e->recent_count < JR_TARE_SAMPLES)
        e->recent_count++;
    return 0;
}

static void internal_error(jr_engine *e)
{
    e->internal_errors++;
    latch(e, F_INTERNAL);
}

static uint16_t status(const jr_engine *e)
{
    unsigned s = 0;
    s |= e->handshaken ? ST_HANDSHAKEN : 0u;
    s |= e->enabled ? ST_ENABLED : 0u;
    s |= e->homed ? ST_HOMED : 0u;
    s |= (e->motion >= 0) ? ST_MOVING : 0u;
    s |= e->homing ? ST_HOMING : 0u;
    s |= e->guard_enabled ? ST_GUARD_ARMED : 0u;
    s |= e->guard_tripped ? ST_GUARD_TRIPPED : 0u;
    s |= e->fault ? ST_FAULT : 0u;
    s |= e->gripper_moving ? ST_GRIPPER_MOVING : 0u;
    s |= e->rate == 0.0f ? ST_PAUSED : 0u;
    s |= (e->rate > 0.0f && e->rate < 1.0f) ? ST_SLOWED : 0u;
    s |= e->presence_held ? ST_PRESENCE : 0u;
    return (uint16_t)s;
}

static void telemetry(jr_engine *e)
{
    jr_telemetry t;
    memset(&t, 0, sizeof t);
    t.device_time_us = device_us(e);
    t.boot_id = e->boot_id;
    t.status = status(e);
    t.fault = e->fault;
    t.traj_id = e->motion >= 0 ? e->slots[e->motion].traj_id : 0;
    t.last_cmd_seq = e->last_seq >= 0 ? (uint16_t)e->last_seq : 0;
    t.joint_count = e->cfg.joint_count;
    memcpy(t.q, e->state.q, sizeof t.q);
    memcpy(t.qd, e->state.qd, sizeof t.qd);
    t.gripper_width_m = e->state.gripper_width;
    tared(e, t.wrench);
    memcpy(t.q_set, e->setpoint, sizeof t.q_set);
    uint8_t body[JR_MAX_BODY];
    emit(e, JR_TELEMETRY, body, jr_telemetry_pack(&t, body));
}

void jr_engine_tick(jr_engine *e, uint64_t now_us)
{
    e->now_us = now_us;
    if (read_hardware(e) != 0)
        internal_error(e);
    read_commands(e);
    if (e->watchdog_armed && e->has_last_rx &&
        since(e, e->last_rx_us) > (double)e->cfg.watchdog_s)
        latch(e, F_WATCHDOG);
    safety(e);
    presence(e);
    advance_motion(e);
    if (e->hal.command_joints(e->hal.ctx, e->setpoint) != 0)
        internal_error(e);
    advance_gripper(e);
    e->ticks++;
    if (e->ticks % e->telemetry_every == 0u)
        telemetry(e);
}

void jr_engine_serve_link(jr_engine *e, uint64_t now_us)
{
    e->now_us = now_us;
    if (read_hardware(e) != 0)
        internal_error(e);
    read_commands(e);
}

size_t jr_engine_receive(jr_engine *e, const uint8_t *data, size_t n)
{
    if (data == NULL || n == 0)
        return 0;
    size_t room = JR_INBOX - e->inbox_len;
    if (n > room)
        n = room;
    memcpy(e->inbox + e->inbox_len, data, n);
    e->inbox_len += n;
    return n;
}

void jr_engine_sent(jr_engine *e, size_t n)
{
    if (n >= e->out_len) {
        e->out_len = 0;
        return;
    }
    memmove(e->out, e->out + n, e->out_len - n);
    e->out_len -= n;
}

void jr_engine_boot(jr_engine *e, uint32_t boot_id, uint64_t now_us)
{
    jr_config cfg = e->cfg;
    jr_hal hal = e->hal;
    memset(e, 0, sizeof *e);
    e->cfg = cfg;
    e->hal = hal;
    e->boot_id = boot_id;
    e->boot_us = now_us;
    e->now_us = now_us;
    e->last_seq = -1;
    e->motion = -1;
    e->rate = 1.0f;
    /* as the reference: max(1, round(control / telemetry)), halves to even */
    double every = cfg.telemetry_hz ? rint((double)cfg.control_hz / cfg.telemetry_hz) : 1.0;
    e->telemetry_every = every >= 1.0 ? (uint32_t)every : 1u;
    jr_decoder_init(&e->decoder);
    event(e, EV_BOOT, 0, 0, 0.0f);
    /* the set-points start where the arm is; a board that cannot read it at boot must not
     * move: INTERNAL, until a good reading and a CLEAR_FAULT and HOME */
    if (read_hardware(e) != 0)
        internal_error(e);
    memcpy(e->setpoint, e->state.q, sizeof e->setpoint);
}

void jr_engine_init(jr_engine *e, const jr_config *cfg, const jr_hal *hal, uint32_t boot_id,
                    uint64_t now_us)
{
    e->cfg = *cfg;
    if (e->cfg.joint_count > JR_MAX_JOINTS)      /* a configuration the engine cannot drive */
        e->cfg.joint_count = JR_MAX_JOINTS;
    e->hal = *hal;
    jr_engine_boot(e, boot_id, now_us);
}

size_t jr_engine_size(void) { return sizeof(jr_engine); }

const uint8_t *jr_engine_output(const jr_engine *e, size_t *n)
{
    *n = e->out_len;
    return e->out;
}

uint16_t jr_engine_fault(const jr_engine *e) { return e->fault; }

uint32_t jr_engine_internal_errors(const jr_engine *e) { return e->internal_errors; }

void jr_engine_setpoint(const jr_engine *e, float *out)
{
    memcpy(out, e->setpoint, e->cfg.joint_count * sizeof(float));
}
