/* Every message of the protocol (docs/protocol.md section 3): commands decoded from a frame's body,
 * the device's messages packed into one. No I/O, no allocation. */
#ifndef JR_MESSAGES_H
#define JR_MESSAGES_H

#include <stddef.h>
#include <stdint.h>

#define JR_PROTOCOL_VERSION 4u
#define JR_MAX_JOINTS 12u
#define JR_MAX_POINTS_PER_FRAME 8u
#define JR_TRAJ_LOAD_HEADER 8u

typedef enum {
    JR_HELLO = 0x01, JR_HEARTBEAT = 0x02, JR_ENABLE = 0x03, JR_HOME = 0x04, JR_TRAJ_LOAD = 0x05,
    JR_TRAJ_RUN = 0x06, JR_GUARD = 0x07, JR_GRIPPER = 0x08, JR_TARE = 0x09, JR_STOP = 0x0A,
    JR_ESTOP = 0x0B, JR_CLEAR_FAULT = 0x0C, JR_RATE = 0x0D,
    JR_ACK = 0x80, JR_NAK = 0x81, JR_HELLO_REPLY = 0x82, JR_TELEMETRY = 0x83, JR_EVENT = 0x84
} jr_type;

typedef enum {
    JR_MALFORMED = 1, JR_UNKNOWN_TYPE = 2, JR_NO_HANDSHAKE = 3, JR_VERSION = 4,
    JR_OUT_OF_SEQUENCE = 5, JR_FAULT_LATCHED = 6, JR_NOT_ENABLED = 7, JR_NOT_HOMED = 8, JR_BUSY = 9,
    JR_LIMIT = 10, JR_BAD_TRAJECTORY = 11, JR_START_MISMATCH = 12, JR_FAULT_ACTIVE = 13
} jr_reason;

/* How a command's body read: JR_DECODED, a jr_reason (MALFORMED, UNKNOWN_TYPE), or JR_NOT_FINITE:
 * it fits, but a number in it is a NaN or an infinity (MALFORMED to the host; the command is
 * filled in, so a device can forget the trajectory it names). */
#define JR_DECODED 0
#define JR_NOT_FINITE (-1)

typedef struct {
    uint16_t traj_id, index, total;
    uint8_t count, joints;
    float t[JR_MAX_POINTS_PER_FRAME];
    float q[JR_MAX_POINTS_PER_FRAME][JR_MAX_JOINTS];
} jr_traj_load;

typedef struct {
    uint8_t type;
    union {
        uint16_t protocol_version;                          /* HELLO */
        uint8_t on;                                         /* ENABLE */
        jr_traj_load load;                                  /* TRAJ_LOAD */
        uint16_t traj_id;                                   /* TRAJ_RUN */
        struct { uint8_t enabled; float direction[3]; float threshold_n; } guard;
        struct { float width_m; float force_n; } gripper;
        float scale;                                        /* RATE */
    } u;
} jr_command;

/* points of `joints` joints one TRAJ_LOAD carries (as many as fit the 240-byte body, at most 8);
 * 0 for a joint count outside 1..JR_MAX_JOINTS */
unsigned jr_points_per_frame(unsigned joints);

int jr_command_decode(uint8_t type, const uint8_t *body, size_t n, jr_command *out);

typedef struct { float q_min, q_max, speed_max, q_home; } jr_joint_info;

typedef struct {
    uint16_t cmd_seq, protocol_version;
    uint8_t firmware_version[3];
    uint32_t boot_id;
    uint16_t control_hz, telemetry_hz, max_points;
    float gripper_stroke_m, force_range_n;
    uint8_t joint_count;
    jr_joint_info joints[JR_MAX_JOINTS];
} jr_hello_reply;

typedef struct {
    uint64_t device_time_us;
    uint32_t boot_id;
    uint16_t status, fault, traj_id, last_cmd_seq;
    uint8_t joint_count;
    float q[JR_MAX_JOINTS], qd[JR_MAX_JOINTS];
    float gripper_width_m;
    float wrench[6];
    float q_set[JR_MAX_JOINTS];
} jr_telemetry;

typedef struct {
    uint8_t kind;
    uint64_t device_time_us;
    uint16_t traj_id, code;
    float value;
} jr_event;

/* Each writes a body into `out` (room for 240 bytes) and returns its length. */
size_t jr_ack_pack(uint16_t cmd_seq, uint8_t *out);
size_t jr_nak_pack(uint16_t cmd_seq, uint8_t reason, uint8_t *out);
size_t jr_hello_reply_pack(const jr_hello_reply *m, uint8_t *out);
size_t jr_telemetry_pack(const jr_telemetry *m, uint8_t *out);
size_t jr_event_pack(const jr_event *m, uint8_t *out);

#endif
