#!/usr/bin/env bash
# Run a command as root with Docker's default capability set (no CAP_SYS_ADMIN, as a grader runs on Gradescope),
# to test the grader in that mode:   bash scripts/docker-caps.sh .venv/bin/python -m pytest -q tests/hostile
# Needs root and capsh (Debian's libcap2-bin); the command's own arguments are passed through unchanged.
set -euo pipefail
DOCKER_CAPS=cap_chown,cap_dac_override,cap_fsetid,cap_fowner,cap_mknod,cap_net_raw,cap_setgid,cap_setuid,\
cap_setfcap,cap_setpcap,cap_net_bind_service,cap_sys_chroot,cap_kill,cap_audit_write
# Every capability the bounding set holds now, less Docker's: dropped from the bounding set for good.
drop=$(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' '\n' | grep -vxF -f <(tr ',' '\n' <<<"$DOCKER_CAPS") \
       | paste -sd, -)
exec capsh --inh= --caps="$DOCKER_CAPS+eip" ${drop:+--drop="$drop"} -- -c 'exec "$@"' docker-caps "$@"
