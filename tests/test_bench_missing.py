"""Benchmarks fail loudly: a row whose input is absent or whose scenario errors is printed as
MISSING, kept in the raw figures, and fails `python -m bench --check`; never dropped."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat

from bench.cold import corpus_row
from bench.harness import Missing, report
from bench.safety import build_scenarios, missing_inputs
from bench.safety_scenarios import generated_notebooks
from bench.summary import check, summarize


def test_a_missing_row_is_printed_kept_and_fails_the_check(tmp_path: Path) -> None:
    figures = tmp_path / "cold.json"
    report("cold path", [Missing("corpus notebooks", "no corpus at /nowhere")], figures)
    assert json.loads(figures.read_text()) == [
        {"name": "corpus notebooks", "missing": "no corpus at /nowhere"}
    ]
    misses = check({"cold": figures}, baseline_path=tmp_path / "none.json")
    assert misses == ["cold: corpus notebooks: not measured: no corpus at /nowhere"]
    lines = summarize({"cold": figures}, tmp_path / "all.json")
    assert any("MISSING: no corpus at /nowhere" in line for line in lines)


def test_the_safety_table_without_its_corpus_says_so_and_fails_the_check(tmp_path: Path) -> None:
    scenarios, where = build_scenarios(True, tmp_path / "no-corpus", seeds=1)
    assert scenarios and "NOT MEASURED" in where
    missing = missing_inputs(where)
    assert missing and str(tmp_path / "no-corpus") in missing[0]
    figures = tmp_path / "safety.json"
    verdict = {"lost": 0, "wrong_cell": 0, "corrupted": 0, "non_conflicting_applied": 1.0,
               "overlapping_rejected": 1.0, "met": True}  # fmt: skip
    figures.write_text(json.dumps({"notes": [], "missing": missing, "hashline": verdict}))
    assert check({"safety": figures}) == [f"safety: not measured: {missing[0]}"]


def test_with_its_corpus_the_safety_table_misses_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    _, raw = next(iter(generated_notebooks(1)))
    (corpus / "one.ipynb").write_text(raw)
    head = "file\trepo\tpath\tcommit\tbytes\tnbformat\thas_ids\tfeatures\tvalid"
    (corpus / "MANIFEST.tsv").write_text(f"{head}\none.ipynb\tr\tp\tc\t1\t4.5\ty\t-\ty\n")
    scenarios, where = build_scenarios(True, corpus, seeds=1, corpus_limit=1)
    assert "1 from" in where and missing_inputs(where) == []
    assert any(s.label.startswith("corpus") for s in scenarios)


def test_a_corpus_row_that_errors_is_a_missing_row_not_a_dropped_one(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    broken.write_text(nbformat.writes(nb).replace('"nbformat": 4', '"nbformat": "four"'))
    work = tmp_path / "work"
    work.mkdir()
    row = corpus_row(broken, 1, work)
    assert isinstance(row, Missing) and "broken.ipynb" in row.name
    assert row.reason  # the error, named
    empty = tmp_path / "empty.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), empty)
    assert corpus_row(empty, 1, work) is None  # nothing to edit: said, not an error
