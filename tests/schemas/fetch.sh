#!/usr/bin/env bash
# The official SARIF 2.1.0 JSON schema that tests/test_formats.py validates
# `--output-format sarif` against, fetched from the npm registry: the package
# @microsoft/jest-sarif (MIT) ships it as lib/schemas/sarif-2.1.0-rtm.5.json,
# the OASIS 2.1.0 schema (the final one differs in its title, id and
# description only).  Pinned by the file's SHA-256; run by .ci/run.
set -euo pipefail
cd "$(dirname "$0")"
SCHEMA=sarif-2.1.0-rtm.5.json
SHA256=2d99159ae54a3eea97f81781cff48780548657c35949f4b7f25e99a2ba4de4f8
if [ -f "$SCHEMA" ] && echo "$SHA256  $SCHEMA" | sha256sum -c --status; then
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" @microsoft/jest-sarif@1.0.0-beta.0)
tar -xzf "$work/$tarball" -C "$work" "package/lib/schemas/$SCHEMA"
echo "$SHA256  $work/package/lib/schemas/$SCHEMA" | sha256sum -c --status
mv "$work/package/lib/schemas/$SCHEMA" "$SCHEMA"
echo "tests/schemas: $SCHEMA"
