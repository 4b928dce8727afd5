"""Cost follows what changed: the notebook layer's speed work, in one place.

A notebook of thousands of cells is read, edited and written again and again, by agents and by
the people who save it between their edits. Every step here costs what changed (the cells an
edit or a person's save touched, and byte comparisons done in C), never what the notebook
holds. The modules, each with its own invariants and each checked against the general path by
property tests (tests/notebook/incremental):

- `cellmatch`: which cells of a new version are the very objects of the old one, and where.
  Unchanged cells stay the same objects through every step below, so everything cached by cell
  identity (serialized JSON, output summaries, byte spans) stays valid.
- `layout`: where each cell's JSON sits in a file in nbformat's layout; a write reuses the bytes
  of every unchanged cell and serializes only changed and new ones (`assemble`).
- `region`: an edit merged by the part of the projection it changed, not the whole text.
- `reload`: a person's save read by the bytes that changed: runs of unchanged cells taken by one
  comparison, only the cells between parsed; the notebook equals a whole parse, always.

Elsewhere, by the data they work on: `loading.splice_views` (a new version's projection spliced
from the old one's, re-projecting only unshared cells), `serialize.CellJsonCache` (a cell's JSON
by identity), `validity.carry_validity` (a reloaded version's schema verdict from its
predecessor's), and `hashline.offload` (large notebooks' work off the server's event loop).

Invariants common to all: each shortcut returns exactly what the general path returns (the
whole parse, the whole projection, the whole serialization), or declines (None) and the caller
takes the general path; none ever guesses.
"""
