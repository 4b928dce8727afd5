"""The public surface of `jupyter_hashline.zones` and its stdlib-only import."""

from __future__ import annotations

import json
import subprocess
import sys

import jupyter_hashline.zones as zones

EXPECTED_ALL = {
    "AppendLog",
    "ByteInvariantError",
    "CacheLedger",
    "DriftPart",
    "FrozenDict",
    "FrozenList",
    "FrozenPrefix",
    "LedgerTurn",
    "MessageFormatError",
    "MissCause",
    "PinRecord",
    "PinnedPrefix",
    "PrefixBreak",
    "PrefixDrift",
    "PrefixInvariantChecker",
    "PrefixStabilityManager",
    "Provider",
    "RebuildReason",
    "RebuildRecord",
    "RequestFingerprint",
    "StabilityCheck",
    "ThreeZoneRequest",
    "TurnScratch",
    "Usage",
    "Zone",
    "ZoneSession",
    "ZonesError",
    "canonical_json",
    "check_byte_prefix",
    "freeze",
    "normalize_usage",
    "report_cache",
    "report_zones",
    "thaw",
    "zones_snapshot",
}

DESIGN_NAMES = {
    "PinnedPrefix",
    "FrozenPrefix",
    "PrefixDrift",
    "AppendLog",
    "RebuildReason",
    "RebuildRecord",
    "TurnScratch",
    "ThreeZoneRequest",
    "PrefixStabilityManager",
    "CacheLedger",
}


def test_all_is_pinned() -> None:
    assert set(zones.__all__) == EXPECTED_ALL
    assert len(zones.__all__) == len(EXPECTED_ALL)
    assert set(zones.__all__) >= DESIGN_NAMES


def test_every_exported_name_exists() -> None:
    missing = [name for name in zones.__all__ if not hasattr(zones, name)]
    assert missing == []


def test_import_loads_only_the_standard_library() -> None:
    probe = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import jupyter_hashline.zones\n"
        "new = sorted(set(sys.modules) - before)\n"
        "outside = [m for m in new if m.split('.')[0] not in sys.stdlib_module_names\n"
        "           and m.split('.')[0] != 'jupyter_hashline']\n"
        "ours = [m for m in new if m.startswith('jupyter_hashline')]\n"
        "print(json.dumps({'outside': outside, 'ours': ours}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    result = json.loads(out)
    assert result["outside"] == []
    assert "jupyter_hashline.zones" in result["ours"]
    assert not any(m.startswith("jupyter_hashline.hashline") for m in result["ours"])
