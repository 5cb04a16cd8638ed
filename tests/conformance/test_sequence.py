"""Sequence numbers (docs/protocol.md section 4): no command runs twice or out of order; a
command in sequence uses up its number whatever its answer; numbers wrap at 65536."""

import struct

from firmware_bridge import messages as m


def executed(host) -> int:
    """The last command the device ran, as its telemetry says."""
    return host.telemetry().last_cmd_seq


def test_a_repeated_command_is_answered_again_and_not_run_again(ready):
    ready.quiet()                             # no heartbeat between the command and its repeat
    seq = ready.send(m.Rate(0.5))
    first = ready.answer(seq)
    mark = ready.mark()
    again = ready.command(m.Rate(0.5), seq=seq)
    assert isinstance(first, m.Ack) and again == first
    assert ready.since(mark, m.Ack).count(first) == 1
    assert ready.telemetry().status & m.Status.SLOWED
    assert isinstance(ready.command(m.Heartbeat()), m.Ack)    # and the next number goes on
    ready.beat()


def test_a_skipped_number_is_refused_and_the_command_does_not_run(ready):
    ready.quiet()
    before = executed(ready)
    answer = ready.command(m.EStop(), seq=(ready.seq + 5) & 0xFFFF)
    assert answer.reason == m.Reason.OUT_OF_SEQUENCE
    assert not ready.telemetry().fault & m.Fault.ESTOP
    assert executed(ready) == before
    assert isinstance(ready.command(m.Heartbeat()), m.Ack)    # the skipped number stays free
    ready.beat()


def test_a_refused_command_uses_up_its_number(ready):
    ready.quiet()
    for kind, body in ((m.Rate.TYPE, struct.pack("<f", 1.5)), (0x3F, b""),
                       (m.Home.TYPE, b"")):                       # MALFORMED, UNKNOWN, NOT_ENABLED
        assert isinstance(ready.command_raw(kind, body), m.Nak)
        assert isinstance(ready.command(m.Heartbeat()), m.Ack), kind
    ready.beat()


def test_numbers_wrap_at_65536(host):
    host.write(b"\x00")
    host.seq = 0xFFFE
    assert isinstance(host.command(m.Hello()), m.HelloReply)       # 0xFFFE starts the sequence
    assert isinstance(host.command(m.Heartbeat()), m.Ack)          # 0xFFFF
    assert isinstance(host.command(m.Heartbeat()), m.Ack)          # 0x0000
    assert host.seq == 1
    assert executed(host) == 0


def test_hello_starts_a_new_sequence_whatever_its_number(ready):
    ready.quiet()
    ready.seq = 1234
    assert isinstance(ready.command(m.Hello()), m.HelloReply)
    assert isinstance(ready.command(m.Heartbeat()), m.Ack)
    ready.beat()
