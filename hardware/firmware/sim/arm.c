#include "arm.h"

#include <string.h>

#include "text.h"

#define LAG_S 0.005f
#define GRIPPER_SPEED_M_S 0.1f

static int arm_read(void *ctx, jr_reading *out)
{
    jr_sim_arm *a = ctx;
    memset(out, 0, sizeof *out);
    memcpy(out->q, a->q, sizeof a->q);
    memcpy(out->qd, a->qd, sizeof a->qd);
    out->gripper_width = a->width;
    int acting = a->force_joint < 0 || a->q[a->force_joint] > a->force_beyond;
    if (acting)
        memcpy(out->wrench, a->wrench, sizeof a->wrench);
    a->acting = 0;
    for (int i = 0; i < 6; i++)
        if (acting && a->wrench[i] != 0.0f)
            a->acting = 1;
    out->presence = a->presence;
    return 0;
}

static void record_contact(jr_sim_arm *a, float command0)
{
    int still = a->commanded && command0 == a->last_command0;
    if (!a->contact && a->acting) {
        a->contact = 1;
        a->since_contact = 0;
        if (still)
            a->contact_stop_ticks = 0;
    } else if (a->contact && a->contact_stop_ticks < 0) {
        a->since_contact++;
        if (still)
            a->contact_stop_ticks = a->since_contact;
    }
    a->last_command0 = command0;
    a->commanded = 1;
}

/* one control period of motion, as the engine gives the set-points */
static int arm_joints(void *ctx, const float *q)
{
    jr_sim_arm *a = ctx;
    record_contact(a, q[0]);
    const float dt = a->period_s, alpha = dt < LAG_S ? dt / LAG_S : 1.0f;
    for (int j = 0; j < JR_SIM_JOINTS; j++) {
        float before = a->q[j];
        a->q[j] += alpha * (q[j] - a->q[j]);
        a->qd[j] = (a->q[j] - before) / dt;
    }
    float step = GRIPPER_SPEED_M_S * dt, gap = a->width_target - a->width;
    a->width += gap > step ? step : gap < -step ? -step : gap;
    return 0;
}

static int arm_gripper(void *ctx, float width_m, float force_n)
{
    (void)force_n;
    ((jr_sim_arm *)ctx)->width_target = width_m;
    return 0;
}

void jr_sim_arm_init(jr_sim_arm *arm, jr_config *cfg, unsigned control_hz)
{
    memset(arm, 0, sizeof *arm);
    memset(cfg, 0, sizeof *cfg);
    arm->period_s = 1.0f / (float)control_hz;
    arm->force_joint = -1;
    arm->contact_stop_ticks = -1;
    cfg->joint_count = JR_SIM_JOINTS;
    cfg->gripper_stroke_m = 0.04f;
    cfg->force_range_n = 100.0f;
    cfg->control_hz = (uint16_t)control_hz;
    cfg->telemetry_hz = 250;
    cfg->watchdog_s = 0.2f;
    cfg->tracking_limit = 0.15f;
    cfg->homing_speed_scale = 0.2f;
    cfg->start_tolerance = 0.02f;
    cfg->presence_hold_s = 0.5f;
    /* a 6-joint arm whose home is away from every limit (tests/conformance/devices.py JOINTS) */
    for (int j = 0; j < JR_SIM_JOINTS; j++) {
        cfg->joints[j] = (jr_joint_info){-3.0f, 3.0f, 1.0f, 0.1f * (float)j};
        arm->q[j] = 0.1f * (float)j;
    }
}

jr_hal jr_sim_arm_hal(jr_sim_arm *arm)
{
    return (jr_hal){arm, arm_read, arm_joints, arm_gripper};
}

/* the next whitespace-separated decimal integer of *s; 0 if there is none or it overflows */
static int answer(char *reply, size_t cap, const char *text, int status)
{
    if (cap) {
        size_t n = strlen(text);
        if (n >= cap)
            n = cap - 1;
        memcpy(reply, text, n);
        reply[n] = '\0';
    }
    return status;
}

int jr_sim_command(jr_sim_arm *arm, const char *line, char *reply, size_t cap)
{
    long v[8];
    if (strncmp(line, "force ", 6) == 0) {
        const char *p = line + 6;
        for (int i = 0; i < 8; i++)
            if (!jr_next_int(&p, &v[i]))
                return answer(reply, cap, "error: force J BEYOND_URAD FX FY FZ TX TY TZ", 1);
        if (!jr_at_end(p) || v[0] < -1 || v[0] >= JR_SIM_JOINTS)
            return answer(reply, cap, "error: force J BEYOND_URAD FX FY FZ TX TY TZ", 1);
        arm->force_joint = (int)v[0];
        arm->force_beyond = (float)v[1] * 1e-6f;
        for (int i = 0; i < 6; i++)
            arm->wrench[i] = (float)v[2 + i] * 1e-3f;
        arm->contact = 0;
        arm->contact_stop_ticks = -1;
        return answer(reply, cap, "ok", 0);
    }
    if (strncmp(line, "presence ", 9) == 0) {
        const char *p = line + 9;
        if (!jr_next_int(&p, &v[0]) || !jr_at_end(p) || (v[0] != 0 && v[0] != 1))
            return answer(reply, cap, "error: presence 0|1", 1);
        arm->presence = (unsigned char)v[0];
        return answer(reply, cap, "ok", 0);
    }
    if (strcmp(line, "contact") == 0) {
        char text[40] = "contact none";
        if (arm->contact_stop_ticks >= 0)
            *jr_put_uint(text, "contact stop_ticks=", (uint32_t)arm->contact_stop_ticks) = '\0';
        return answer(reply, cap, text, 0);
    }
    return answer(reply, cap, "error: unknown command (force, presence, contact)", 1);
}

int jr_sim_contact_stop_ticks(const jr_sim_arm *arm) { return arm->contact_stop_ticks; }
