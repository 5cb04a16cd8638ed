/* A simple simulated arm for a firmware with no real arm to drive: the host build's (host/main.c)
 * and the QEMU board's (boards/mps2_an386). Joints follow their set-points with a 5 ms lag, the
 * gripper moves at 0.1 m/s, and the wrist and the safety input read what a test sets through the
 * stimulus commands (`jr_sim_command`): a wrench that acts while one joint is past a position
 * (the wrist meets something there), or always; the safety input seeing someone or not. */
#ifndef JR_SIM_ARM_H
#define JR_SIM_ARM_H

#include <stddef.h>

#include "engine.h"

#define JR_SIM_JOINTS 6

typedef struct {
    float q[JR_SIM_JOINTS], qd[JR_SIM_JOINTS];
    float width, width_target;
    float period_s;
    /* the stimulus: `wrench` acts while q[force_joint] > force_beyond (always if force_joint
     * is -1) */
    float wrench[6];
    int force_joint;
    float force_beyond;
    unsigned char presence;
    /* recorded at the hardware interface, as a bench's recording arm does: the ticks from the
     * first tick whose reading had the stimulus acting to the first whose set-point for joint 0
     * did not move (-1 until then); a `force` line starts it anew */
    unsigned char acting, contact;
    int since_contact, contact_stop_ticks;
    float last_command0;
    unsigned char commanded;
} jr_sim_arm;

/* the arm at its home pose, ticking at `control_hz`, and the configuration its engine runs */
void jr_sim_arm_init(jr_sim_arm *arm, jr_config *cfg, unsigned control_hz);
jr_hal jr_sim_arm_hal(jr_sim_arm *arm);

/* One line of the stimulus channel, without its newline:
 *   force J BEYOND_URAD FX FY FZ TX TY TZ   the wrench, in mN and mN m (sensor frame), acting while
 *                                          joint J is past BEYOND_URAD microradians (J = -1:
 *                                          always); `force -1 0 0 0 0 0 0 0` takes it away
 *   presence 0|1                           the safety input
 *   contact                                `contact stop_ticks=N` (jr_sim_contact_stop_ticks), or
 *                                          `contact none` before the stop
 * Writes the answer (`ok`, or `error: ...`) into `reply`; returns 0 if the line was understood.
 * Integers only: no floating-point parsing in a firmware. */
int jr_sim_command(jr_sim_arm *arm, const char *line, char *reply, size_t cap);

/* ticks from the stimulus first acting to joint 0's set-point standing still, -1 if not yet */
int jr_sim_contact_stop_ticks(const jr_sim_arm *arm);

#endif
