"""Solo records: the robot's own height record per cell and set size, beaten only by a taller
tower, kept whole across a kill."""

import json

import pytest

from controller.records import RecordError, load_records, record_key, update_record


def test_a_taller_tower_beats_the_record_and_a_lower_one_does_not(tmp_path):
    path = tmp_path / "records.json"
    key = record_key("default", 54)
    assert update_record(path, key, "18 2/3", 2, 1) == (None, True)
    old, beaten = update_record(path, key, "18 1/3", 1, 2)
    assert not beaten and old.stories == "18 2/3" and old.seed == 1
    old, beaten = update_record(path, key, "19", 3, 3)
    assert beaten and old.stories == "18 2/3"
    assert load_records(path)[key].stories == "19" and load_records(path)[key].blocks_moved == 3
    # another cell or set keeps its own record
    assert update_record(path, record_key("default", 48), "16 1/3", 1, 1) == (None, True)
    assert set(json.loads(path.read_text())) == {key, record_key("default", 48)}
    assert not list(tmp_path.glob("*.new"))


def test_a_game_with_no_legal_turn_sets_no_record(tmp_path):
    path = tmp_path / "records.json"
    assert update_record(path, "default/54", "", 0, 1) == (None, False)
    assert not path.exists()


def test_a_records_file_that_is_not_one_is_named(tmp_path):
    path = tmp_path / "records.json"
    path.write_text("{not json")
    with pytest.raises(RecordError, match="move it aside"):
        load_records(path)
    path.write_text('{"default/54": {"height": 3}}')
    with pytest.raises(RecordError, match="not this program's"):
        load_records(path)
