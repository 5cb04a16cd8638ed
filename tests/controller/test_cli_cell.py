"""`jenga-robot cell check` as a user runs it."""

from tests.run_cli import jenga_robot


def run(*args):
    return jenga_robot("cell", "check", *args)


def test_default_cell_reaches_a_placement_layer():
    out = run("--layers", "19")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].split() == ["layer", "slot", "0", "slot", "1", "slot", "2"]
    assert lines[2].split() == ["19", "PUL", "PUL", "PUL"]
    assert lines[-1] == "all 9 needed poses reachable"


def test_placement_is_not_needed_inside_the_starting_tower():
    out = run("--layers", "1")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.splitlines()[2].split() == ["1", "PU-", "PU-", "PU-"]


def test_an_unreachable_cell_exits_non_zero_and_says_why(tmp_path, cell_toml):
    far = tmp_path / "far.toml"
    far.write_text(cell_toml.replace("position_m = [0.5, 0.0]", "position_m = [1.4, 0.0]"))
    out = run("--cell", str(far), "--layers", "3")
    assert out.returncode == 1
    assert "3  xx-  xx-  xx-".split() == out.stdout.splitlines()[2].split()
    assert "6 of 6 needed poses unreachable" in out.stdout
    assert "layer 3 slot 0 push: cannot push layer 3 slot 0" in out.stdout


def test_a_bad_cell_file_gets_one_line_naming_the_field(tmp_path, cell_toml):
    bad = tmp_path / "bad.toml"
    bad.write_text(cell_toml.replace("stroke_mm = 40.0", "stroke_mm = 10.0"))
    out = run("--cell", str(bad), "--layers", "3")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "tool.stroke_mm" in lines[0] and "= 10.0" in lines[0]


def test_a_misspelled_section_is_refused_not_dropped(tmp_path, cell_toml):
    """`[curtian]` would silently leave the cell without its light curtain."""
    bad = tmp_path / "c.toml"
    bad.write_text(cell_toml.replace("[curtain]", "[curtian]"))
    out = run("--cell", str(bad), "--layers", "1-1")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "jenga-robot: error: cell file c.toml: curtian (a table): unknown key; did you mean "
        "'curtain'?"]


def test_a_bad_layer_range_is_refused():
    out = run("--layers", "5-2")
    assert out.returncode == 2 and "--layers" in out.stderr
