#!/usr/bin/env bash
# Runs inside scripts/vm's guest (Debian 12, systemd, cgroup v2 only), from the tree's root,
# with the host's plain build in build/:
#  1. the host is what real users run: cgroup2 alone, with memory and pids;
#  2. pyfenced installed with its systemd units (socket activation, Delegate=yes) chooses the
#     v2 backend, keeps a pool for each zygote below its own service cgroup, serves, enforces
#     a memory limit through it, and leaves no cgroup or process behind when stopped;
#  2b. scripts/run, the quick start, started from a cgroup that holds other processes (as from
#     a login session) puts pyfenced in a delegated scope, gets v2 slots, answers hello.py and
#     leaves nothing behind after a Ctrl-C;
#  3. the cgroup unit tests and every integration suite (limits ended through v2 slots,
#     session_lost after an OOM kill, --cgroup, cancel and the pool, the lifecycle, egress...),
#     with each test's pyfenced in a transient systemd scope of its own with Delegate=yes
#     (PYFENCED_WRAPPER), as the unit gives it. PYFENCE_EMULATED tells the tests that the guest
#     is emulated: the few figures they hold against how long jobs take (fairness's "about one
#     job") are checked on the host only.
# Usage: tests/vm/guest.sh [meson test args for step 3, instead of its default suites]
set -uo pipefail
cd "$(dirname "$0")/../.."

failures=0
pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
step() { echo; echo "=== $* ==="; }

step "host"
uname -r
echo "cgroup mounts: $(awk '$3 ~ /^cgroup/ {print $3 " " $2}' /proc/mounts | tr '\n' ' ')"
controllers=$(cat /sys/fs/cgroup/cgroup.controllers)
echo "root controllers: $controllers"
if awk '$3 == "cgroup"' /proc/mounts | grep -q . || ! [[ " $controllers " == *" memory "* && " $controllers " == *" pids "* ]]; then
  fail "not a cgroup v2-only host with memory and pids"
else
  pass "cgroup v2 only, with memory and pids"
fi

[ -f build/build.ninja ] || { echo "no build/ from the host"; exit 1; }

step "installed with the systemd units"
# README's "Under systemd", as written there.
meson install -C build --no-rebuild --quiet || exit 1
ldconfig
systemd-sysusers
systemd-tmpfiles --create
systemctl daemon-reload
systemctl enable --now pyfenced.socket || exit 1
cli=/usr/local/bin/pyfence
export PYFENCE_SOCKET=/run/pyfence/pyfence.sock
out=$($cli exec -c 'print(6 * 7)' 2>&1)
if [ "$out" = "42" ]; then pass "socket activation: first exec answered 42"; else fail "first exec: $out"; fi
unit_cg=/sys/fs/cgroup/system.slice/pyfenced.service
journal=$(journalctl -u pyfenced.service -b --no-pager -o cat)
# LimitNOFILE= of the unit: pyfenced logs the open-file limit it runs with (daemon/fdlimit.h).
if grep -q "open-file limit (RLIMIT_NOFILE): 65536 (hard 65536)" <<<"$journal"; then
  pass "the service's open-file limit is the unit's LimitNOFILE=65536"
else
  fail "open-file limit: $(grep -m1 'open-file limit' <<<"$journal" || echo 'not logged')"
fi
if grep -q "cgroup backend: v2" <<<"$journal"; then
  pass "the service chose the v2 backend: $(grep -m1 -o 'cgroup backend: v2.*' <<<"$journal")"
else
  fail "the service did not choose v2:"
  echo "$journal" | tail -20
fi
# Every zygote (the default one and the data profile's preload one, started after the first
# had moved pyfenced into its supervisor leaf) keeps a pool of its own there: none may fall back
# to workers without cgroup limits.
zygotes=$($cli status --json | python3 -c '
import json, sys
z = json.load(sys.stdin)["zygote"]
print(z["pid"], z.get("preload_pid") or "")')
missing=""
for z in $zygotes; do [ -d "$unit_cg/pyfence-$z" ] || missing="$missing $z"; done
if [ -n "$zygotes" ] && [ -z "$missing" ] && ! grep -q "cgroup backend: none" <<<"$journal"; then
  pass "a v2 pool for each zygote ($zygotes)"
else
  fail "zygotes ($zygotes) without a v2 pool:$missing"
  grep "cgroup" <<<"$journal"
fi
if grep -q WARN <<<"$journal"; then
  echo "warnings in the service's log:"
  grep WARN <<<"$journal"
fi
pools=$(find "$unit_cg" -maxdepth 1 -name 'pyfence-*' -type d)
if [ -n "$pools" ]; then
  pass "pools below the service's cgroup: $(echo $pools | tr '\n' ' ')"
  slot=$(find $pools -maxdepth 1 -name 'w*' -type d | head -1)
  if [ -n "$slot" ] && [ "$(cat "$slot/memory.swap.max")" = "0" ] && [ "$(cat "$slot/pids.max")" != "max" ]; then
    pass "slot $slot: memory.max $(cat "$slot/memory.max"), swap 0, pids.max $(cat "$slot/pids.max"), cpu.max '$(cat "$slot/cpu.max" 2>/dev/null)'"
  else
    fail "no slot with limits under $pools"
  fi
else
  fail "no pyfence-* pool under $unit_cg"
  find "$unit_cg" -maxdepth 2 -type d
fi
# A session's worker lives on between snippets: find it in its slot.
sid=$($cli session open 2>&1)
$cli exec --session "$sid" -c 'x = 1' >/dev/null 2>&1
worker_in_slot=false
for procs in "$unit_cg"/pyfence-*/w*/cgroup.procs; do
  # cgroup files have no size: read them.
  pid=$(head -1 "$procs" 2>/dev/null)
  [ -n "$pid" ] && worker_in_slot=true && echo "worker $pid in ${procs%/cgroup.procs}"
done
$worker_in_slot && pass "a session's worker sits in a pool slot" || fail "no worker found in a pool slot"
$cli session close "$sid" >/dev/null 2>&1
# 64 MiB of memory limit, 256 MiB wanted: the slot's memory.max ends it (RLIMIT_AS is larger).
out=$(PYTHONPATH=client/python python3 -c '
import pyfence
with pyfence.Client("/run/pyfence/pyfence.sock") as c:
    r = c.exec("b = bytearray(256 * 1024 * 1024)", limits={"memory_mb": 64})
    print(r.outcome, r.error)' 2>&1)
if [[ "$out" == memory_limit* ]]; then
  pass "memory limit through the v2 slot: memory_limit"
else
  fail "memory limit: $out"
fi
status=$($cli status 2>&1)
echo "$status" | head -30
systemctl stop pyfenced.service pyfenced.socket
sleep 1
left=$(find "$unit_cg" -name 'pyfence-*' -type d 2>/dev/null)
if [ -z "$left" ] && ! pgrep -f pyfence-zygote >/dev/null; then
  pass "stopped: no pool cgroup, no zygote left"
else
  fail "left after stop: cgroups '$left', processes: $(pgrep -af pyfence)"
fi

step "scripts/run, the quick start, from a cgroup that holds other processes"
# As from a login session (here: this job's service cgroup, with this script in it), scripts/run
# starts pyfenced in a transient delegated scope, so its workers get v2 slots. The guest cannot
# redo the host's build (its system headers are newer than the objects: everything would be
# rebuilt, emulated), so the build's ninja is a no-op here; the rest is scripts/run as it is.
shim=$(mktemp -d)
printf '#!/bin/sh\nexit 0\n' >"$shim/ninja"
chmod +x "$shim/ninja"
rm -rf run
PATH="$shim:$PATH" setsid bash scripts/run >"$shim/out" 2>&1 </dev/null &
runner=$!
for _ in $(seq 1200); do
  grep -q "run: Ctrl-C stops it." "$shim/out" && break
  kill -0 "$runner" 2>/dev/null || break
  sleep 0.5
done
if grep -q "hello from a pyfence worker" "$shim/out" && grep -q "cgroup backend: v2" run/pyfenced.log &&
  ! grep -q "cgroup backend: none" run/pyfenced.log; then
  pass "scripts/run: hello.py answered, $(grep -m1 -o 'transient systemd scope[^"]*' "$shim/out"), $(grep -m1 -o 'cgroup backend: v2' run/pyfenced.log)"
else
  fail "scripts/run:"
  cat "$shim/out"
fi
scope_cg=$(grep -m1 -o "pool under '[^']*'" run/pyfenced.log | sed "s/^pool under '//; s/'$//; s|/pyfence-[0-9]*$||")
# A terminal's Ctrl-C: SIGINT to the process group setsid made.
kill -INT -- -"$runner" 2>/dev/null
wait "$runner"
# systemd collects the scope once its last process is gone: give it a moment.
for _ in $(seq 40); do
  [ -n "$scope_cg" ] && [ -d "$scope_cg" ] || break
  sleep 0.5
done
if grep -q "\[main\] stopped" "$shim/out" && ! pgrep -f "pyfenced --socket $PWD/run/pyfence.sock" >/dev/null &&
  ! pgrep -f pyfence-zygote >/dev/null && { [ -z "$scope_cg" ] || ! [ -d "$scope_cg" ]; }; then
  pass "scripts/run: Ctrl-C stopped pyfenced, its zygotes and its scope ($scope_cg)"
else
  fail "scripts/run after Ctrl-C: $(tail -5 "$shim/out"); left: $(pgrep -af pyfence); scope '$scope_cg'"
fi
rm -rf "$shim" run

step "tests with each pyfenced in a delegated scope"
export PYFENCED_WRAPPER="systemd-run --scope --quiet --collect -p Delegate=yes"
tests=("$@")
# The cgroup unit tests first, then the integration suites in tests/integration/meson.build's
# order, those that read cgroups or end workers by their limits first.
[ ${#tests[@]} -gt 0 ] || tests=(unit.harden_cgroup unit.harden_cgroup_v2 unit.harden_fork
                                 integration.outcomes integration.limits integration.leftovers
                                 integration.sessions integration.options integration.sched
                                 integration.lifecycle integration.egress integration.load
                                 integration.adversarial integration.cli integration.pyclient
                                 integration.libclient integration.values integration.halfclose
                                 integration.unprivileged integration.install
                                 integration.pyclient_fake integration.cli_fake)
export PYFENCE_EMULATED=1
# The guest is emulated: every timeout ten times longer.
if systemd-run --scope --quiet --collect -p Delegate=yes -- \
    meson test -C build --no-rebuild --print-errorlogs --num-processes 1 -t 10 "${tests[@]}"; then
  pass "meson test ${tests[*]}"
else
  fail "meson test ${tests[*]}"
fi

# For the host's summary (scripts/test): /job is the host's build-vm/job.
[ -d /job ] && cp build/meson-logs/testlog.json /job/testlog.json 2>/dev/null

step "result"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
