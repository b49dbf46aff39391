#!/usr/bin/env bash
# Renders the README's inspector pictures (docs/inspector-*.png) headless from the golden
# corpus, through cltrace-inspector --screenshot (EGL, no display). Run from the repository
# root after a build: scripts/inspector_screenshots.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
bin=$build/bin
shot() { "$bin/cltrace-inspector" "$@" --size 1600x900; }
# A fixed directory: its path is in the dialog's picture.
tmp=/tmp/cltrace-shots
rm -rf "$tmp" && mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# Go to seq (Ctrl+G) and find (Ctrl+F), on the small-command-list recording.
shot corpus/traces/smallcl.cltrace --goto 1,234 --screenshot docs/inspector-goto.png
shot corpus/traces/smallcl.cltrace --find function:RecycleDestroyCommandList \
  --screenshot docs/inspector-find.png
# The deferred-context machine (edge labels placed apart) and long local-handle labels.
shot corpus/traces/smallcl.cltrace --select 0x7e0000021000 --at 1500 \
  --screenshot docs/inspector-labels.png
# Side by side: the clean recording against the planted E_OUTOFMEMORY one (R22).
shot corpus/traces/smallcl.cltrace corpus/traces/smallcl_R22.cltrace \
  --screenshot docs/inspector-diff.png
# A damaged trace: the dialog (exit 2), then the same file with --salvage.
"$bin/cltrace" export --quiet corpus/traces/smallcl.cltrace -o "$tmp/s.jsonl"
"$bin/cltrace" import --quiet "$tmp/s.jsonl" -o "$tmp/damaged.cltrace" --chunk-bytes 4096
printf '\x55\xaa' | dd of="$tmp/damaged.cltrace" bs=1 seek=9000 conv=notrunc 2>/dev/null
shot "$tmp/damaged.cltrace" --screenshot docs/inspector-damaged.png || [ $? -eq 2 ]
shot "$tmp/damaged.cltrace" --salvage --screenshot docs/inspector-salvaged.png
echo "wrote docs/inspector-{goto,find,labels,diff,damaged,salvaged}.png"
