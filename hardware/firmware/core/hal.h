/* What the firmware drives: the hardware abstraction a port to a board provides (the joints'
 * servos and encoders, the gripper, the wrist force/torque sensor, the safety input). The serial
 * link and the tick timer stay with the board's main loop, which hands the engine the bytes that
 * arrived and the time, and sends what the engine leaves in its output (engine.h). */
#ifndef JR_HAL_H
#define JR_HAL_H

#include <stdint.h>

#include "messages.h"

typedef struct {
    float q[JR_MAX_JOINTS];      /* joint positions, rad */
    float qd[JR_MAX_JOINTS];     /* joint speeds, rad/s */
    float gripper_width;         /* m */
    float wrench[6];             /* raw sensor: force N (3), torque N m (3), sensor frame */
    uint8_t presence;            /* the safety input sees something */
} jr_reading;

typedef struct {
    void *ctx;
    /* this tick's reading; non-zero if it could not be read */
    int (*read)(void *ctx, jr_reading *out);
    /* non-zero if the command could not be given (the firmware latches INTERNAL) */
    int (*command_joints)(void *ctx, const float *q);
    int (*command_gripper)(void *ctx, float width_m, float force_n);
} jr_hal;

#endif
