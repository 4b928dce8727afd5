"""Cell sources the kernel tests share: code whose outputs are known in advance."""

from __future__ import annotations

PNG_CELL = """\
import struct, zlib
from IPython.display import Image, display
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
rows = b"".join(b"\\x00" + b"\\x00\\x80\\xff" * 640 for _ in range(480))
png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 640, 480, 8, 2, 0, 0, 0))
       + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
display(Image(data=png))
"""
"""Displays a 640x480 PNG made in the kernel (no file, no network): its outputs hold base64."""

ENDLESS = "while True: pass"
"""Runs until interrupted."""

FIGURE_CELL = """\
import matplotlib
matplotlib.use("module://matplotlib_inline.backend_inline")
%config InlineBackend.print_figure_kwargs = {"bbox_inches": None}
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(16, 8), dpi=100)
ax.plot([1, 3, 2, 4])
plt.show()
"""
"""Draws a 1600x800 matplotlib figure inline (over 1,024 px: attached downscaled to 1024x512)."""
