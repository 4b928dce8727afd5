"""Check every link of a built documentation site, offline.

    python scripts/check_docs_links.py [docs/_build/html]

Every `href` and `src` of every page that points inside the site must name a file the build
wrote, and its `#fragment`, if any, an `id` on that page. Links out of the site (`http:`,
`https:`, `mailto:`) are not fetched: the build runs offline, and the pages that name outside
addresses say so in their text. Prints each broken link as `page: link (why)` and exits 1 if
there is one, else 0. `make docs` runs it after the build; a test runs it on a fresh build.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

REPO = Path(__file__).resolve().parent.parent
OUTSIDE = ("http", "https", "mailto", "data", "javascript")


class _Page(HTMLParser):
    """The links and the ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.add(value)
            elif name in ("href", "src") and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def broken_links(site: Path) -> Iterator[str]:
    """`page: link (why)` for every link inside `site` that leads nowhere."""
    site = site.resolve()
    pages = {
        path: _parse(path)
        for path in sorted(site.rglob("*.html"))
        if "_static" not in path.relative_to(site).parts  # the theme's templates, not pages
    }
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme in OUTSIDE or parts.netloc:
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            name = f"{path.relative_to(site)}: {link}"
            if not target.is_relative_to(site):
                yield f"{name} (outside the site)"
            elif target.is_dir():
                if not (target / "index.html").is_file():
                    yield f"{name} (a folder without index.html)"
            elif not target.is_file():
                yield f"{name} (no such file)"
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    yield f"{name} (no #{parts.fragment} on that page)"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    site = Path(args[0]) if args else REPO / "docs" / "_build" / "html"
    if not (site / "index.html").is_file():
        print(f"no built site at {site}: run `make docs` first", file=sys.stderr)
        return 2
    broken = list(broken_links(site))
    for line in broken:
        print(line, file=sys.stderr)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
