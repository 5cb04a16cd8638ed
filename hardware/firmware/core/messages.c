#include "messages.h"

#include <math.h>

#include "framing.h"
#include "wire.h"

unsigned jr_points_per_frame(unsigned joints)
{
    if (joints < 1u || joints > JR_MAX_JOINTS)
        return 0u;
    unsigned fit = (JR_MAX_BODY - JR_TRAJ_LOAD_HEADER) / (4u * (joints + 1u));
    return fit < JR_MAX_POINTS_PER_FRAME ? fit : JR_MAX_POINTS_PER_FRAME;
}

static int finite_all(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static int decode_traj_load(const uint8_t *body, size_t n, jr_traj_load *load)
{
    if (n < JR_TRAJ_LOAD_HEADER)
        return JR_MALFORMED;
    load->traj_id = jr_get_u16(body);
    load->index = jr_get_u16(body + 2);
    load->total = jr_get_u16(body + 4);
    load->count = body[6];
    load->joints = body[7];
    unsigned per_frame = jr_points_per_frame(load->joints);
    if (per_frame == 0u || load->count < 1u || load->count > per_frame)
        return JR_MALFORMED;
    if (n != JR_TRAJ_LOAD_HEADER + (size_t)load->count * 4u * (load->joints + 1u))
        return JR_MALFORMED;
    const uint8_t *p = body + JR_TRAJ_LOAD_HEADER;
    int finite = 1;
    for (unsigned i = 0; i < load->count; i++) {
        load->t[i] = jr_get_f32(p);
        p += 4;
        for (unsigned j = 0; j < load->joints; j++, p += 4)
            load->q[i][j] = jr_get_f32(p);
        finite = finite && isfinite(load->t[i]) && finite_all(load->q[i], load->joints);
    }
    return finite ? JR_DECODED : JR_NOT_FINITE;
}

int jr_command_decode(uint8_t type, const uint8_t *body, size_t n, jr_command *out)
{
    out->type = type;
    switch (type) {
    case JR_HEARTBEAT: case JR_HOME: case JR_TARE: case JR_STOP: case JR_ESTOP: case JR_CLEAR_FAULT:
        return n == 0 ? JR_DECODED : JR_MALFORMED;
    case JR_HELLO:
        if (n != 2)
            return JR_MALFORMED;
        out->u.protocol_version = jr_get_u16(body);
        return JR_DECODED;
    case JR_ENABLE:
        if (n != 1 || body[0] > 1)
            return JR_MALFORMED;
        out->u.on = body[0];
        return JR_DECODED;
    case JR_TRAJ_LOAD:
        return decode_traj_load(body, n, &out->u.load);
    case JR_TRAJ_RUN:
        if (n != 2)
            return JR_MALFORMED;
        out->u.traj_id = jr_get_u16(body);
        return JR_DECODED;
    case JR_GUARD:
        if (n != 17 || body[0] > 1)
            return JR_MALFORMED;
        out->u.guard.enabled = body[0];
        for (int i = 0; i < 3; i++)
            out->u.guard.direction[i] = jr_get_f32(body + 1 + 4 * i);
        out->u.guard.threshold_n = jr_get_f32(body + 13);
        return finite_all(out->u.guard.direction, 3) && isfinite(out->u.guard.threshold_n)
            ? JR_DECODED : JR_NOT_FINITE;
    case JR_GRIPPER:
        if (n != 8)
            return JR_MALFORMED;
        out->u.gripper.width_m = jr_get_f32(body);
        out->u.gripper.force_n = jr_get_f32(body + 4);
        return isfinite(out->u.gripper.width_m) && isfinite(out->u.gripper.force_n)
            ? JR_DECODED : JR_NOT_FINITE;
    case JR_RATE:
        if (n != 4)
            return JR_MALFORMED;
        out->u.scale = jr_get_f32(body);
        /* also false for NaN */
        return out->u.scale >= 0.0f && out->u.scale <= 1.0f ? JR_DECODED : JR_MALFORMED;
    default:
        return JR_UNKNOWN_TYPE;
    }
}

size_t jr_ack_pack(uint16_t cmd_seq, uint8_t *out)
{
    return (size_t)(jr_put_u16(out, cmd_seq) - out);
}

size_t jr_nak_pack(uint16_t cmd_seq, uint8_t reason, uint8_t *out)
{
    return (size_t)(jr_put_u8(jr_put_u16(out, cmd_seq), reason) - out);
}

size_t jr_hello_reply_pack(const jr_hello_reply *m, uint8_t *out)
{
    uint8_t *p = jr_put_u16(out, m->cmd_seq);
    p = jr_put_u16(p, m->protocol_version);
    for (int i = 0; i < 3; i++)
        p = jr_put_u8(p, m->firmware_version[i]);
    p = jr_put_u32(p, m->boot_id);
    p = jr_put_u16(p, m->control_hz);
    p = jr_put_u16(p, m->telemetry_hz);
    p = jr_put_u16(p, m->max_points);
    p = jr_put_f32(p, m->gripper_stroke_m);
    p = jr_put_f32(p, m->force_range_n);
    uint8_t count = m->joint_count <= JR_MAX_JOINTS ? m->joint_count : (uint8_t)JR_MAX_JOINTS;
    p = jr_put_u8(p, count);
    for (unsigned j = 0; j < count; j++) {
        p = jr_put_f32(p, m->joints[j].q_min);
        p = jr_put_f32(p, m->joints[j].q_max);
        p = jr_put_f32(p, m->joints[j].speed_max);
        p = jr_put_f32(p, m->joints[j].q_home);
    }
    return (size_t)(p - out);
}

size_t jr_telemetry_pack(const jr_telemetry *m, uint8_t *out)
{
    uint8_t n = m->joint_count <= JR_MAX_JOINTS ? m->joint_count : (uint8_t)JR_MAX_JOINTS;
    uint8_t *p = jr_put_u64(out, m->device_time_us);
    p = jr_put_u32(p, m->boot_id);
    p = jr_put_u16(p, m->status);
    p = jr_put_u16(p, m->fault);
    p = jr_put_u16(p, m->traj_id);
    p = jr_put_u16(p, m->last_cmd_seq);
    p = jr_put_u8(p, n);
    for (unsigned j = 0; j < n; j++)
        p = jr_put_f32(p, m->q[j]);
    for (unsigned j = 0; j < n; j++)
        p = jr_put_f32(p, m->qd[j]);
    p = jr_put_f32(p, m->gripper_width_m);
    for (unsigned j = 0; j < 6; j++)
        p = jr_put_f32(p, m->wrench[j]);
    for (unsigned j = 0; j < n; j++)
        p = jr_put_f32(p, m->q_set[j]);
    return (size_t)(p - out);
}

size_t jr_event_pack(const jr_event *m, uint8_t *out)
{
    uint8_t *p = jr_put_u8(out, m->kind);
    p = jr_put_u64(p, m->device_time_us);
    p = jr_put_u16(p, m->traj_id);
    p = jr_put_u16(p, m->code);
    p = jr_put_f32(p, m->value);
    return (size_t)(p - out);
}
