"""`date -d 'TZ="ZONE" …'`: a time zone named inside the date string is a file date reads.

GNU date (coreutils 9.1) takes a leading `TZ="…"` in a -d string as the
zone to read the date in, and glibc loads that zone from a file: a name
under /usr/share/zoneinfo, but an absolute path, `:PATH` or a name with `..`
reaches any file (strace: `TZ="../../tmp/x"` opened
/usr/share/zoneinfo/../../tmp/x), and a FIFO there never ends (`date -d
'TZ="/tmp/fifo" now'` blocked until killed).  The file is judged as any
file a flag's value names (rules/files.py): a device or kernel file by its
name, a FIFO or a link to one on disk.
"""

from __future__ import annotations

import os
import re

from ...read.model import Word
from ..codes import Code
from . import rule
from .files import check_read_paths

# Leading blanks, then TZ="…" with `\"` and `\\` escaped, as parse_datetime reads it.
_ZONE = re.compile(r'\s*TZ="((?:[^"\\]|\\.)*)"')
_ZONEINFO = "/usr/share/zoneinfo"


def zone_file(zone: str) -> str:
    """The file glibc reads for TZ=ZONE: `:` dropped, a relative name under the zoneinfo directory."""
    path = zone[1:] if zone.startswith(":") else zone
    return os.path.normpath(os.path.join(_ZONEINFO, path))


@rule("date_zone_file", codes=[Code.BP403, Code.BP603],
      deny=["date -d 'TZ=\"/dev/zero\" now'", "date --date=' TZ=\"../../../dev/tty\" now'",
            "date -d 'TZ=\":/proc/kmsg\" 12:00'"],
      allow=["date -d 'TZ=\"Europe/Paris\" now'", "date -d 'TZ=\"UTC0\" 12:00'", "date -d yesterday",
             "date -d 'TZ=\"/usr/share/zoneinfo/UTC\" now'", "date -d 'now TZ=\"/dev/zero\"'"],
      reads=["-d"])
def date_zone_file(inv, ctx) -> None:
    """`date -d 'TZ="FILE" …'` where FILE is a device, FIFO or kernel file.
    glibc reads the zone file TZ names, from wherever an absolute path,
    `:PATH` or a name with `..` points; only a leading TZ="…" counts (date
    refuses one later in the string)."""
    for use in inv.uses("-d"):
        match = _ZONE.match(use.value or "")
        if match is not None:
            holder = use.value_word or use.word
            path = zone_file(re.sub(r"\\(.)", r"\1", match[1]))
            check_read_paths([Word(path, holder.span, path)], ctx, f"date {use.name}")
