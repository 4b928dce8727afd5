"""The engine's public names (DESIGN §9) are pinned: renaming or dropping one breaks users."""

from __future__ import annotations

import jupyter_hashline.hashline as hashline

DESIGN_NAMES = {
    "normalize",
    "section_tag",
    "parse_patch",
    "Patcher",
    "ReadResult",
    "PatchResult",
    "SectionResult",
    "SnapshotStore",
    "Snapshot",
    "InMemorySnapshotStore",
    "SqliteSnapshotStore",
    "Filesystem",
    "WriteResult",
    "DiskFilesystem",
    "InMemoryFilesystem",
    "NotFoundError",
    "is_not_found",
    "HashlineError",
}


EXPORTED = {
    "TAGS_KEPT",
    "common_prefix",
    "common_suffix",
    "Capabilities",
    "capabilities_of",
    "checked_filesystem",
    "AmbiguousEditError",
    "AnchorError",
    "CodeDoesNotParseError",
    "CodeSpan",
    "CodeSpans",
    "ParseProblem",
    "SpanFinder",
    "SyntaxCheck",
    "finder_for_path",
    "AppliedEdits",
    "ByteStorage",
    "CellSelector",
    "DiskFilesystem",
    "Edit",
    "EditOp",
    "Filesystem",
    "Footprint",
    "HashlineError",
    "InMemoryFilesystem",
    "InMemorySnapshotStore",
    "LineRebase",
    "LineRebaser",
    "MountTable",
    "Normalized",
    "NotFoundError",
    "NotTextError",
    "OverwriteRefusedError",
    "PartialWriteError",
    "PatchResult",
    "PatchSection",
    "PatchSyntaxError",
    "Patcher",
    "PathOutsideRootError",
    "ReadResult",
    "RebaseRefusal",
    "RepeatedNoOpError",
    "SectionOp",
    "SectionResult",
    "SeenLinesPolicy",
    "Snapshot",
    "SnapshotStore",
    "SqliteSnapshotStore",
    "StaleTagError",
    "StoreBusyError",
    "TooLargeError",
    "UnknownTagError",
    "UnseenLinesError",
    "ViewAnnotator",
    "WriteFailedError",
    "WriteResult",
    "apply_edits",
    "is_not_found",
    "line_opcodes",
    "normalize",
    "offloaded",
    "parse_patch",
    "patch_schema",
    "rebase_by_text",
    "scope_memo",
    "section_tag",
    "too_many_edits",
    "validate_edits",
}


def test_all_is_pinned() -> None:
    assert set(hashline.__all__) == EXPORTED
    assert len(hashline.__all__) == len(EXPORTED)
    assert set(hashline.__all__) >= DESIGN_NAMES
    for name in hashline.__all__:
        assert getattr(hashline, name) is not None, name


def test_every_error_subclass_is_exported() -> None:
    exported = {getattr(hashline, n) for n in hashline.__all__}
    errors = {obj for obj in exported if isinstance(obj, type) and issubclass(obj, Exception)}
    assert hashline.HashlineError in errors
    subclasses = set()
    pending = [hashline.HashlineError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("jupyter_hashline.hashline"):
                subclasses.add(sub)
                pending.append(sub)
    assert subclasses <= errors
