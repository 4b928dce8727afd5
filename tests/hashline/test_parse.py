"""The edit language: text form, JSON form, the published schema, and syntax errors."""

from __future__ import annotations

import json

import jsonschema
import pytest

from jupyter_hashline.hashline.edits import Edit, EditOp, PatchSection
from jupyter_hashline.hashline.errors import PatchSyntaxError
from jupyter_hashline.hashline.parse import PatchBulk, parse_patch, patch_bulk, patch_schema

DESIGN_EXAMPLE = """\
[examples/demo.py#5BF9]
replace 2:
+df = pd.read_csv("sales.csv", parse_dates=["date"])
insert after 2:
+df = df.dropna()
delete 7..9
replace 11..12:
+total = df["amount"].sum()
insert head:
+\"\"\"Sales report.\"\"\"
insert tail:
+print(total)
"""

DESIGN_EDITS = (
    Edit.replace(2, 2, ['df = pd.read_csv("sales.csv", parse_dates=["date"])']),
    Edit.insert_after(2, ["df = df.dropna()"]),
    Edit.delete(7, 9),
    Edit.replace(11, 12, ['total = df["amount"].sum()']),
    Edit.insert_head(['"""Sales report."""']),
    Edit.insert_tail(["print(total)"]),
)


def test_design_example_parses_to_every_verb() -> None:
    [section] = parse_patch(DESIGN_EXAMPLE)
    assert section == PatchSection("examples/demo.py", "5BF9", DESIGN_EDITS)


@pytest.mark.parametrize(
    ("verb_block", "edit"),
    [
        ("replace 3:\n+x", Edit.replace(3, 3, ["x"])),
        ("replace 3..5:\n+x\n+y", Edit.replace(3, 5, ["x", "y"])),
        ("replace 3-5:\n+x", Edit.replace(3, 5, ["x"])),
        ("delete 4", Edit.delete(4)),
        ("delete 4..6", Edit.delete(4, 6)),
        ("delete 4..6:", Edit.delete(4, 6)),
        ("insert before 1:\n+a", Edit.insert_before(1, ["a"])),
        ("insert after 9:\n+a", Edit.insert_after(9, ["a"])),
        ("insert head:\n+a", Edit.insert_head(["a"])),
        ("insert tail:\n+a", Edit.insert_tail(["a"])),
        ("replace 0:\n+a", Edit.replace(0, 0, ["a"])),
        ("replace 9..7:\n+a", Edit.replace(9, 7, ["a"])),
    ],
)
def test_each_verb_in_text_form(verb_block: str, edit: Edit) -> None:
    [section] = parse_patch(f"[f.py#ABCD]\n{verb_block}\n")
    assert section.edits == (edit,)


def test_body_rows_are_verbatim_and_bare_plus_is_an_empty_line() -> None:
    [section] = parse_patch("[f.py#abcd]\nreplace 1:\n+    indented  \n+\n+\t+tab\n")
    assert section.tag == "ABCD"
    assert section.edits[0].lines == ("    indented  ", "", "\t+tab")


def test_crlf_patch_text_reads_as_lf_but_a_lone_cr_is_content() -> None:
    [section] = parse_patch("[f.py#ABCD]\r\nreplace 1:\r\n+a\rb\r\n")
    assert section.edits[0].lines == ("a\rb",)


def test_envelope_and_several_sections() -> None:
    text = (
        "*** Begin Patch\n[a.py#1111]\ndelete 1\n\n[dir/b c.py#2222]\n"
        "insert tail:\n+end\n*** End Patch\n"
    )
    sections = parse_patch(text)
    assert [s.path for s in sections] == ["a.py", "dir/b c.py"]
    assert sections[1].edits == (Edit.insert_tail(["end"]),)


def test_path_with_hash_uses_the_last_hash_for_the_tag() -> None:
    [section] = parse_patch("[notes#1.md#00FF]\ndelete 2\n")
    assert (section.path, section.tag) == ("notes#1.md", "00FF")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "The edit is empty"),
        ("replace 1:\n+x\n", "before any `[path#TAG]` header"),
        ("[f.py]\nreplace 1:\n+x\n", "has no tag"),
        ("[f.py#XYZ1]\nreplace 1:\n+x\n", "is not a tag"),
        ("[f.py#ABCD\nreplace 1:\n+x\n", "is not closed"),
        ("[f.py#ABCD]\nfrobnicate 3:\n+x\n", "unknown verb or row `frobnicate 3:`"),
        ("[f.py#ABCD]\nreplace three:\n+x\n", "expected `replace N:` or `replace N..M:`"),
        ("[f.py#ABCD]\ninsert somewhere 3:\n+x\n", "`insert before N:`"),
        ("[f.py#ABCD]\n+x\n", "outside any edit"),
        ("[f.py#ABCD]\ndelete 3\n+x\n", "`delete` takes no body rows"),
        ("[f.py#ABCD]\nreplace 3:\n", "has no body rows"),
        ("[f.py#ABCD]\ninsert tail:\n\n", "has no body rows"),
        ("[f.py#ABCD]\n", "has no edits"),
        ("[f.py#ABCD]\nreplace 3:\n+a\n\n+b\n", "blank line inside the body rows"),
        ("[f.py#ABCD]\nreplace 3:\n-old\n+new\n", "looks like a diff row"),
        ("[f.py#ABCD]\nreplace 3:\n3:new\n", "looks like a row of the read view"),
        ("*** Begin Patch\n[f.py#ABCD]\ndelete 1\n", "does not end with `*** End Patch`"),
        ("[f.py#ABCD]\ndelete 1\n*** End Patch\n", "does not start with `*** Begin Patch`"),
    ],
)
def test_syntax_errors_name_the_problem(text: str, expected: str) -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(text)
    assert expected in str(caught.value)
    assert caught.value.status == 400


def test_syntax_error_names_the_line_of_the_edit() -> None:
    with pytest.raises(PatchSyntaxError, match=r"line 4 of the edit"):
        parse_patch("[f.py#ABCD]\nreplace 1:\n+ok\nbogus\n")


# -- JSON form --------------------------------------------------------------------------------

JSON_SECTION = {
    "path": "examples/demo.py",
    "tag": "5BF9",
    "edits": [
        {"op": "replace", "start": 2, "end": 2, "lines": [DESIGN_EDITS[0].lines[0]]},
        {"op": "insert_after", "line": 2, "lines": ["df = df.dropna()"]},
        {"op": "delete", "start": 7, "end": 9},
        {"op": "replace", "start": 11, "end": 12, "lines": ['total = df["amount"].sum()']},
        {"op": "insert_head", "lines": ['"""Sales report."""']},
        {"op": "insert_tail", "lines": ["print(total)"]},
    ],
}


def test_json_dict_list_and_string_forms_agree_with_the_text_form() -> None:
    expected = [PatchSection("examples/demo.py", "5BF9", DESIGN_EDITS)]
    assert parse_patch(JSON_SECTION) == expected
    assert parse_patch([JSON_SECTION]) == expected
    assert parse_patch(json.dumps(JSON_SECTION)) == expected
    assert parse_patch("  " + json.dumps([JSON_SECTION], indent=2)) == expected


def test_parsed_sections_pass_through() -> None:
    section = PatchSection("a.py", "ABCD", (Edit.delete(1),))
    assert parse_patch(section) == [section]
    assert parse_patch([section, section]) == [section, section]


def test_end_defaults_to_start_and_tag_may_carry_a_hash() -> None:
    [section] = parse_patch({"path": "a", "tag": "#abcd", "edits": [{"op": "delete", "start": 3}]})
    assert section.tag == "ABCD"
    assert section.edits == (Edit.delete(3, 3),)


def test_to_json_round_trips() -> None:
    [section] = parse_patch(DESIGN_EXAMPLE)
    assert parse_patch(section.to_json()) == [section]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("{not json", "does not parse"),
        ([], "non-empty list"),
        ({"path": "a", "tag": "ABCD"}, "missing key(s) edits"),
        ({"path": "a", "tag": "ABCD", "edits": [], "extra": 1}, "unknown key(s) extra"),
        ({"path": "", "tag": "ABCD", "edits": [{"op": "delete", "start": 1}]}, "`path`"),
        ({"path": "a", "tag": "nope", "edits": [{"op": "delete", "start": 1}]}, "4 hex digits"),
        ({"path": "a", "tag": "ABCD", "edits": []}, "non-empty list"),
        ({"path": "a", "tag": "ABCD", "edits": [{"op": "zap"}]}, "unknown op 'zap'"),
        ({"path": "a", "tag": "ABCD", "edits": [{"op": "delete"}]}, "missing key(s) start"),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "delete", "start": "one"}]},
            "must be a line number",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "delete", "start": True}]},
            "must be a line number",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "delete", "start": 1, "lines": ["x"]}]},
            "unknown key(s) lines",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "insert_tail", "lines": []}]},
            "`lines` is empty",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "insert_tail", "lines": 5}]},
            "list of strings",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "insert_tail", "lines": ["a\nb"]}]},
            "contains a line break",
        ),
        (
            {"path": "a", "tag": "ABCD", "edits": [{"op": "insert_after", "lines": ["x"]}]},
            "missing key(s) line",
        ),
    ],
)
def test_json_errors_name_the_problem(value: object, expected: str) -> None:
    with pytest.raises(PatchSyntaxError) as caught:
        parse_patch(value)  # type: ignore[arg-type]
    assert expected in str(caught.value)


# -- the published schema ----------------------------------------------------------------------


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(patch_schema())


@pytest.mark.parametrize(
    "example",
    [
        JSON_SECTION,
        [JSON_SECTION, {"path": "b.py", "tag": "00AA", "edits": [{"op": "delete", "start": 1}]}],
        {"path": "a", "tag": "#abcd", "edits": [{"op": "insert_before", "line": 1, "lines": [""]}]},
    ],
)
def test_schema_accepts_what_the_parser_accepts(example: object) -> None:
    jsonschema.validate(example, patch_schema())
    assert parse_patch(example)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "example",
    [
        {"path": "a", "tag": "ABCD", "edits": [{"op": "zap", "start": 1}]},
        {"path": "a", "tag": "ABCD", "edits": [{"op": "delete", "start": 1, "lines": ["x"]}]},
        {"path": "a", "tag": "ABCD", "edits": [{"op": "insert_tail", "lines": ["a\nb"]}]},
        {"path": "a", "tag": "ABC", "edits": [{"op": "delete", "start": 1}]},
        {"path": "a", "tag": "ABCD", "edits": []},
        {"path": "a", "tag": "ABCD", "edits": [{"op": "replace", "start": 1}]},
        [],
    ],
)
def test_schema_rejects_what_the_parser_rejects(example: object) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(example, patch_schema())
    with pytest.raises(PatchSyntaxError):
        parse_patch(example)  # type: ignore[arg-type]


def test_every_op_is_in_the_schema() -> None:
    text = json.dumps(patch_schema())
    for op in EditOp:
        assert f'"{op.value}"' in text


@pytest.mark.parametrize(
    "patch",
    [
        "[a.py#ABCD]\ndelete 1\n  replace 2..3:\n+x\n+delete 9\ninsert after 4:\n+y\n"
        "insert tail:\n+z",
        {"path": "a.py", "tag": "ABCD", "edits": [{"op": "delete", "start": 1, "end": 1}] * 3},
        [
            {
                "path": "a.py",
                "tag": "ABCD",
                "edits": [{"op": "replace", "start": 1, "lines": "a\nb"}],
            }
        ],
        json.dumps({"path": "a.py", "tag": "ABCD", "edits": [{"op": "delete", "start": 2}] * 5}),
        "```\n[a.py#ABCD]\nreplace 1:\n+x\n```",
    ],
)
def test_patch_bulk_counts_what_parsing_finds(patch: object) -> None:
    bulk = patch_bulk(patch)
    assert bulk.edits == sum(len(s.edits) for s in parse_patch(patch))  # type: ignore[arg-type]
    assert bulk.rows >= bulk.edits


def test_patch_bulk_weighs_rows() -> None:
    text = "[a.py#ABCD]\nreplace 1:\n" + "+x\n" * 5_000
    assert patch_bulk(text) == PatchBulk(1, 5_003)
    section = {
        "path": "a.py",
        "tag": "ABCD",
        "edits": [{"op": "replace", "start": 1, "lines": ["x"] * 9}],
    }
    assert patch_bulk(section) == PatchBulk(1, 10)
    assert patch_bulk(PatchSection("a.py", "ABCD", ())) == PatchBulk(0, 0)
