#!/usr/bin/env bash
# Install the real clients the end-to-end tests drive (tests/e2e/clients, versions
# pinned in its package-lock.json), with Node.js and npm from Debian if missing.
# A client that cannot be installed is not an error here: its tests skip and say so.
set -uo pipefail
cd "$(dirname "$0")/clients"
if ! command -v npm >/dev/null; then
    apt-get install -y -q nodejs npm >/dev/null || echo "install-clients: no Node.js/npm" >&2
fi
if npm ci --no-audit --no-fund --loglevel=error >/dev/null; then
    echo "install-clients: $(ls -d node_modules/claude-code-* node_modules/@google/gemini-cli node_modules/@openai/codex node_modules/@github/copilot | tr '\n' ' ')"
else
    echo "install-clients: npm ci failed; the end-to-end tests will skip" >&2
fi
