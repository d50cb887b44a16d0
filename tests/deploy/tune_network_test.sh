#!/usr/bin/env bash
# deploy/tune-network.sh: a dry run plans changes and makes none; bad arguments are named.
set -uo pipefail
script="$(dirname "$0")/../../deploy/tune-network.sh"
fail() { echo "FAIL: $*"; exit 1; }

before=$(cat /sys/class/net/lo/mtu)
out=$("$script" --dry-run lo) || fail "dry run exited $?"
echo "$out"
grep -q "change(s) planned on lo" <<<"$out" || fail "no summary of planned changes"
if [[ "$before" != 9000 ]]; then grep -q "would: MTU of lo from $before to 9000" <<<"$out" || fail "MTU change not planned"; fi
[[ "$(cat /sys/class/net/lo/mtu)" == "$before" ]] || fail "a dry run changed the MTU"

err=$("$script" --dry-run no-such-if0 2>&1) && fail "an unknown interface was accepted"
grep -q "no network interface 'no-such-if0'" <<<"$err" || fail "unknown interface not named: $err"
err=$("$script" --frobnicate lo 2>&1) && fail "an unknown option was accepted"
grep -q "unknown option --frobnicate" <<<"$err" || fail "unknown option not named: $err"
echo "1 passed, 0 failed"
