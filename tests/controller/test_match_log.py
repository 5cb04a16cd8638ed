"""The match log keeps every event it was given, survives a kill at any byte, and refuses to
mix two matches or read a damaged log as a whole one."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.match.log import LOG_VERSION, MatchLog, MatchLogError, read_events

HEADER = {"config": {"players": ["robot", "person"]}, "seed": 1}


def _write(path, count: int) -> list[dict]:
    with MatchLog.create(path, HEADER) as log:
        return [log.append("touch", player="robot", t=float(i)) for i in range(count)]


def test_every_event_is_on_the_disk_when_append_returns(tmp_path):
    path = tmp_path / "match.jsonl"
    log = MatchLog.create(path, HEADER)
    log.append("touch", player="robot", t=1.5)
    events = read_events(path)          # read while the log is still open
    assert [e["event"] for e in events] == ["match", "touch"]
    assert events[0]["version"] == LOG_VERSION and events[0]["seed"] == 1
    assert events[1]["player"] == "robot" and events[1]["t"] == 1.5 and events[1]["seq"] == 1
    log.close()
    with pytest.raises(MatchLogError, match="closed"):
        log.append("touch", player="robot", t=2.0)


def test_a_new_match_never_overwrites_an_old_log(tmp_path):
    path = tmp_path / "match.jsonl"
    _write(path, 2)
    before = path.read_bytes()
    with pytest.raises(MatchLogError, match="--resume"):
        MatchLog.create(path, HEADER)
    assert path.read_bytes() == before


def test_numpy_values_are_logged_as_numbers(tmp_path):
    np = pytest.importorskip("numpy")
    with MatchLog.create(tmp_path / "m.jsonl", HEADER) as log:
        written = log.append("note", force_n=np.float64(0.25), at=np.array([1, 2]))
    assert written["force_n"] == 0.25 and written["at"] == [1, 2]


def test_resume_goes_on_numbering_after_the_logged_events(tmp_path):
    path = tmp_path / "match.jsonl"
    _write(path, 3)
    log, events = MatchLog.resume(path)
    assert len(events) == 4
    log.append("advance", t=9.0)
    log.close()
    assert [e["seq"] for e in read_events(path)] == [0, 1, 2, 3, 4]


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_a_kill_at_any_byte_loses_only_the_event_being_written(tmp_path_factory, cut):
    path = tmp_path_factory.mktemp("log") / "match.jsonl"
    _write(path, 5)
    whole = path.read_bytes()
    cut %= len(whole) + 1
    path.write_bytes(whole[:cut])
    if cut < whole.index(b"\n") + 1:
        # not even the header is whole: there is no match to read back, nor to resume
        assert read_events(path) == []
        with pytest.raises(MatchLogError, match="nothing to resume"):
            MatchLog.resume(path)
        return
    events = read_events(path)
    lines = whole[:cut].split(b"\n")
    whole_lines = len(lines) - 1          # the part after the last newline is torn
    assert events == [json.loads(line) for line in lines[:whole_lines]]
    log, _ = MatchLog.resume(path)
    log.append("advance", t=99.0)
    log.close()
    again = read_events(path)
    assert again[:-1] == events and again[-1]["seq"] == len(events)


def test_a_damaged_line_inside_the_log_is_named(tmp_path):
    path = tmp_path / "match.jsonl"
    _write(path, 3)
    lines = path.read_bytes().split(b"\n")
    lines[2] = b'{"seq": 2, "event": "tou'
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(MatchLogError, match="line 3 .* damaged"):
        read_events(path)


def test_missing_lines_are_not_read_as_a_whole_match(tmp_path):
    path = tmp_path / "match.jsonl"
    _write(path, 3)
    lines = path.read_bytes().split(b"\n")
    del lines[1]
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(MatchLogError, match="missing or out of order"):
        read_events(path)


def test_a_log_of_another_version_or_no_log_at_all(tmp_path):
    path = tmp_path / "match.jsonl"
    path.write_text(json.dumps({"seq": 0, "event": "match", "version": LOG_VERSION + 1}) + "\n")
    with pytest.raises(MatchLogError, match="version"):
        read_events(path)
    with pytest.raises(MatchLogError, match="no match log"):
        read_events(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(MatchLogError, match="nothing to resume"):
        MatchLog.resume(tmp_path / "empty.jsonl")
