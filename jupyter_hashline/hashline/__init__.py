"""The hashline editing engine: pure, with storage behind two seams.

A read shows `[path#TAG]` and numbered lines; an edit names that tag and line numbers; a stale
edit is rebased only when provably safe, else rejected with what to do next. This package
imports only the standard library and xxhash (a test checks it in a fresh interpreter); files
and snapshots go through the `Filesystem` and `SnapshotStore` protocols.
"""

from __future__ import annotations

from .apply import AppliedEdits, apply_edits, validate_edits
from .callscope import scope_memo
from .disk import DiskFilesystem
from .edits import Edit, EditOp, PatchSection
from .errors import (
    AmbiguousEditError,
    AnchorError,
    CodeDoesNotParseError,
    HashlineError,
    NotFoundError,
    NotTextError,
    OverwriteRefusedError,
    PatchSyntaxError,
    PathOutsideRootError,
    RepeatedNoOpError,
    StaleTagError,
    StoreBusyError,
    TooLargeError,
    UnknownTagError,
    UnseenLinesError,
    WriteFailedError,
    is_not_found,
)
from .filesystem import (
    ByteStorage,
    Capabilities,
    CellSelector,
    CodeSpans,
    Filesystem,
    Footprint,
    LineRebase,
    LineRebaser,
    RebaseRefusal,
    ViewAnnotator,
    WriteResult,
    capabilities_of,
    checked_filesystem,
)
from .line_diff import line_opcodes
from .memory_fs import InMemoryFilesystem
from .memory_store import InMemorySnapshotStore
from .messages import TAGS_KEPT, too_many_edits
from .mounts import MountTable
from .offload import offloaded
from .parse import parse_patch, patch_schema
from .patcher import Patcher, SeenLinesPolicy
from .recovery import rebase_by_text
from .results import PartialWriteError, PatchResult, ReadResult, SectionOp, SectionResult
from .sqlite_store import SqliteSnapshotStore
from .store import Snapshot, SnapshotStore
from .syntax import CodeSpan, ParseProblem, SpanFinder, SyntaxCheck, finder_for_path
from .text import Normalized, common_prefix, common_suffix, normalize, section_tag

__all__ = [
    "TAGS_KEPT",
    "AmbiguousEditError",
    "AnchorError",
    "AppliedEdits",
    "ByteStorage",
    "Capabilities",
    "CellSelector",
    "CodeDoesNotParseError",
    "CodeSpan",
    "CodeSpans",
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
    "ParseProblem",
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
    "SpanFinder",
    "SqliteSnapshotStore",
    "StaleTagError",
    "StoreBusyError",
    "SyntaxCheck",
    "TooLargeError",
    "UnknownTagError",
    "UnseenLinesError",
    "ViewAnnotator",
    "WriteFailedError",
    "WriteResult",
    "apply_edits",
    "capabilities_of",
    "checked_filesystem",
    "common_prefix",
    "common_suffix",
    "finder_for_path",
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
]
