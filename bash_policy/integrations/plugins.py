"""The plugin files for clients that run JavaScript in process instead of a
command hook: OpenCode (a plugin in .opencode/plugins/) and pi (an
extension).  `bash-policy hook NAME --print-config` prints one.

Each printed file is self-contained: the plugin's source from js/ with the
shared serve client (js/serve-client.mjs) inlined and this installation's
settings (the absolute argv of `bash-policy serve`, the options) filled in.
A file that imported the client from the installed package would fail to
load once the package moved, and both clients skip a plugin that fails to
load, which would leave bash ungated; a self-contained file still loads,
and then its failing server turns every gated call into a denial.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..records import dataclass

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

JS = Path(__file__).parent / "js"
CLIENT_IMPORT = re.compile(r'^import \{[^}]*\} from "\./serve-client\.mjs"; // bash-policy: client\n', re.M)
SETTINGS_LINE = "const SETTINGS = {}; // bash-policy: settings\n"


@dataclass(frozen=True)
class Plugin:
    name: str  # as in `bash-policy hook NAME`
    client: str  # the product, for messages
    source: str  # the file in js/
    install: str  # where the printed file goes


PLUGINS = {p.name: p for p in (
    Plugin("opencode", "OpenCode", "opencode-plugin.mjs", ".opencode/plugins/bash-policy.js"),
    Plugin("pi", "pi", "pi-plan-mode.mjs", "~/.pi/agent/extensions/bash-policy-plan.js"),
)}


def render(plugin: Plugin, settings: dict[str, Any]) -> str:
    """The plugin file with the client inlined and `settings` filled in."""
    source = (JS / plugin.source).read_text(encoding="utf-8")
    client = (JS / "serve-client.mjs").read_text(encoding="utf-8")
    # Inlined, the client's names are the file's own: OpenCode calls every
    # export of a plugin file as a plugin, so only the plugin is exported.
    client = re.sub(r"^export (class|function) ", r"\1 ", client, flags=re.M)
    if len(CLIENT_IMPORT.findall(source)) != 1 or source.count(SETTINGS_LINE) != 1:
        raise ValueError(f"{plugin.source}: the client import or the settings line is missing")
    header = (f"// Printed by `bash-policy hook {plugin.name} --print-config`; install as {plugin.install}.\n"
              "// Print it again after moving or upgrading bash-policy.\n")
    filled = f"const SETTINGS = {json.dumps(settings, indent=2)};\n"
    return header + CLIENT_IMPORT.sub(lambda _: client + "\n", source).replace(SETTINGS_LINE, filled)
