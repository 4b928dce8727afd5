"""What the command line says where the tools' words assume a session.

An agent reads and edits in one session, so the engine calls a tag it never issued "not from
this session". On a command line each command is its own process; what ties a `read` to the
next `patch` is the snapshot store (the same `--root` and `--store`, or the same `--server`).

Invariants:
- Only the sentence about the session is replaced: the engine's verdict, "Nothing was
  written/ran", the current header and the rows it shows reach the user unchanged.
- The command suggested is runnable as printed: the same global options as the failed command,
  then `read PATH`; a token is never printed (the line says to add it when one was given).
"""

from __future__ import annotations

import argparse
import re
import shlex

from ..hashline import TAGS_KEPT
from ..tools import resolve_store_path
from .common import PROG

_NOT_FROM_SESSION = re.compile(
    r"hash #(?P<tag>\w+) is not from this session for (?P<path>.+?) "
    r"\(no read here issued it, or it is too old\)"
)

EDIT_SYNTAX = f"""\
An edit names the file and the tag of your read, then operations on the numbered lines that
`read` printed (the numbers of the text as read; they do not shift while an edit applies):

  $ {PROG} read report.py
  [report.py#7342]
  1:import pandas as pd
  2:df = pd.read_csv("sales.csv")
  3:print(df.head())
  $ {PROG} patch <<'EOF'
  [report.py#7342]
  replace 2:
  +df = pd.read_csv("sales.csv", parse_dates=["date"])
  insert after 2:
  +df = df.dropna()
  delete 3
  EOF

Verbs: replace N: / replace N..M:, delete N / delete N..M, insert before N: / insert after N:,
insert head: / insert tail:; each `+` row is one new line. The JSON form (an object with path,
tag and edits) is accepted as well.
"""

DOCS_LINK = (
    "The edit language: https://github.com/jupyter-hashline/jupyter-hashline/blob/main/"
    "docs/guide/edit-language.md (also `make docs` in a checkout)."
)


def where_tags_live(args: argparse.Namespace) -> str:
    """The store this command used, in words a person can check."""
    if args.server:
        return f"the Jupyter server {args.server}"
    root = args.root or "."
    return f"the snapshot store {resolve_store_path(root, args.store)}"


def global_options(args: argparse.Namespace) -> list[str]:
    """The global options of this command, to repeat in a suggested one."""
    words: list[str] = []
    for option, value in (
        ("--root", args.root),
        ("--server", args.server),
        ("--store", args.store),
        ("--agent", args.agent),
    ):
        if value:
            words += [option, value]
    return words


def unknown_tag(args: argparse.Namespace, text: str) -> str:
    """`text` (an `unknown_tag` refusal) said for a command line: what the tag is, which store
    did not know it, and the `read` to run first."""
    paths: list[str] = []

    def explain(match: re.Match[str]) -> str:
        paths.append(match["path"])
        return (
            f"#{match['tag']} is not a tag {where_tags_live(args)} holds for {match['path']} "
            "(a tag is the 4 hex digits of the [path#TAG] header a `read` prints; it is known "
            "only with the same --root and --store, or the same --server, as that read, and "
            "only a file's newest tags are kept)"
        )

    kept = [line for line in text.split("\n") if not line.startswith(TAGS_KEPT)]
    said = _NOT_FROM_SESSION.sub(explain, "\n".join(kept))  # it says where tags live itself
    for path in dict.fromkeys(paths):
        command = shlex.join([PROG, *global_options(args), "read", path])
        token = " (with your --token, or $JUPYTER_TOKEN set)" if args.token else ""
        said += f"\nOn the command line, read it first: {command}{token}"
    return said
