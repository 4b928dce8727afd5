"""The documentation site, built as `make docs` builds it (offline, warnings are errors, a fresh
environment): every link inside it resolves, every page can be navigated, the REST reference
says each thing once and where it goes, and the screenshots are shown at their own size."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.check_docs_links import broken_links

REPO = Path(__file__).resolve().parents[2]
SIDEBAR_LINKS = re.compile(
    r'Section Navigation</p>\s*<div class="bd-toc-item navbar-nav">(.*?)</div>', re.S
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("docs") / "html"
    options = ["-W", "--keep-going", "-E", "-q", "-b", "html"]
    built = subprocess.run(
        [sys.executable, "-m", "sphinx", *options, str(REPO / "docs"), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr  # any warning fails the build, as in `make docs`
    return out


def pages(site: Path) -> list[Path]:
    return [
        page
        for page in sorted(site.rglob("*.html"))
        if "_static" not in page.relative_to(site).parts
    ]


def test_every_link_inside_the_site_resolves(site: Path) -> None:
    assert list(broken_links(site)) == []


def test_the_link_check_finds_missing_pages_and_anchors(site: Path, tmp_path: Path) -> None:
    copy = tmp_path / "html"
    shutil.copytree(site, copy)
    (copy / "guide" / "planted.html").write_text(
        '<a href="running.html#no-such-heading">x</a> <a href="../nowhere.html">y</a>'
        ' <img src="../_images/missing.png"> <a href="https://example.org/">fine</a>'
        ' <a href="running.html#the-reply">fine</a>'
    )
    assert sorted(broken_links(copy)) == [
        "guide/planted.html: ../_images/missing.png (no such file)",
        "guide/planted.html: ../nowhere.html (no such file)",
        "guide/planted.html: running.html#no-such-heading (no #no-such-heading on that page)",
    ]


def test_every_page_with_a_section_navigation_lists_its_section(site: Path) -> None:
    navigated = 0
    for page in pages(site):
        html = page.read_text(encoding="utf-8")
        if "Section Navigation" not in html:
            continue
        links = SIDEBAR_LINKS.search(html)
        assert links and "<a " in links.group(1), f"{page.relative_to(site)}: empty navigation"
        navigated += 1
    assert navigated >= 12  # every page but the home page, search and index


def test_the_rest_reference_says_each_thing_once_and_where_parameters_go(site: Path) -> None:
    text = (REPO / "docs" / "reference" / "generated" / "rest.md").read_text()
    assert text.count("Every route needs authentication") == 1
    assert text.count("optional `X-Hashline-Agent` header") == 1
    rows = re.findall(r"^\| `(\w+)` \| (query|path) \| .*? \| (yes)? \| (.*) \|$", text, re.M)
    in_path = {"session_id", "proposal_id"}
    assert {(name, "path") for name in in_path} <= {(name, where) for name, where, _, _ in rows}
    assert all(where == "query" for name, where, _, _ in rows if name not in in_path)
    undescribed = [name for name, _, _, description in rows if not description.strip()]
    assert undescribed == []
    assert "where-the-token-comes-from" in (site / "reference/generated/rest.html").read_text()


OVERFLOWING_CONTENTS = """() => {
    const column = document.querySelector(".bd-sidebar-secondary");
    if (!column) return [];
    const right = column.getBoundingClientRect().right;
    return [...column.querySelectorAll(".toc-entry a")]
        .filter((a) => a.getBoundingClientRect().right > right + 1)
        .map((a) => a.textContent.trim());
}"""
"""The entries of a page's "On this page" column that run past its right edge."""


@pytest.mark.browser
def test_every_screenshot_is_shown_at_its_own_size(site: Path, chromium_path: str) -> None:
    """A screenshot scaled down by the page is illegible: each is at most 10% wider than the
    column that shows it, on a desktop window; and no page's contents column overflows."""
    from playwright.sync_api import sync_playwright

    from scripts.labrun import CHROMIUM_ARGS

    shown: dict[str, tuple[int, int]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            for html in pages(site):
                page.goto(html.as_uri())
                for image in page.locator("article img").all():
                    natural, width = image.evaluate("i => [i.naturalWidth, i.clientWidth]")
                    shown[str(image.get_attribute("src")).rsplit("/", 1)[-1]] = (natural, width)
                overflow = page.evaluate(OVERFLOWING_CONTENTS)
                assert overflow == [], f"{html.relative_to(site)}: contents overflow: {overflow}"
        finally:
            browser.close()
    assert {"sidebar.png", "panel.png"} <= set(shown)
    squeezed = {name: size for name, size in shown.items() if size[0] > 1.1 * size[1]}
    assert squeezed == {}
