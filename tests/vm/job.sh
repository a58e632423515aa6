#!/usr/bin/env bash
# In scripts/vm's guest (pyfence-vm-job.service): unpacks the tree and the host's build from
# /job/src.tar at the host's path (/job/path), so the build's absolute paths hold, runs
# tests/vm/guest.sh with the arguments scripts/vm was given, and leaves its output and exit
# status in /job, which is the host's build-vm/job.
dir=$(cat /job/path)
mkdir -p "$dir" && tar -xf /job/src.tar -C "$dir" && cd "$dir" || { echo 1 >/job/rc; exit 1; }
eval "args=($(cat /job/args))"
bash tests/vm/guest.sh "${args[@]}" >/job/output.log 2>&1
echo $? >/job/rc
