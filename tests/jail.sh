#!/bin/sh
# tests/jail.sh MODE DIR CMD...: run CMD in an outer jail where only DIR is writable.
#   MODE root:   real root in new mount+pid namespaces; every mount read-only except DIR and
#                the cgroup file systems (txbox puts each transaction in a cgroup of its own
#                where it may, and the suite tests that as root)
#   MODE user:   uid/gid 54321 (or the caller when not root) in bubblewrap: read-only root,
#                DIR writable, own /dev and /proc, own empty /tmp (DIR may lie under it;
#                so may the directories in JAIL_RO, seen read-only: tests/clients/' cache)
# txbox runs destructive commands in its tests; a bug in its sandbox must only be able to
# harm DIR.
set -eu
mode=$1 dir=$2
shift 2
case $mode in
root)
        exec unshare --mount --pid --fork --mount-proc --propagation private -- \
                sh -c '
                dir=$1; shift
                awk "{print \$5}" /proc/self/mountinfo | sort -r | while read -r mp; do
                        case $mp in /proc|/proc/*|/sys/fs/cgroup|/sys/fs/cgroup/*) continue ;; esac
                        mount -o remount,bind,ro "$mp" 2>/dev/null || true
                done
                mount --bind "$dir" "$dir"
                mount -o remount,bind,rw "$dir"
                if touch /txbox-jail-probe 2>/dev/null; then
                        rm -f /txbox-jail-probe; echo "jail: root is writable, refusing" >&2; exit 99
                fi
                exec "$@"' jail "$dir" "$@"
        ;;
user)
        run=""
        if [ "$(id -u)" -eq 0 ]; then
                run="setpriv --reuid=54321 --regid=54321 --clear-groups --inh-caps=-all --bounding-set=-all --"
        fi
        ro=""
        for d in ${JAIL_RO:-}; do ro="$ro --ro-bind $d $d"; done
        exec $run bwrap --ro-bind / / --tmpfs /tmp --bind "$dir" "$dir" $ro --dev /dev --proc /proc \
                --unshare-all --die-with-parent -- "$@"
        ;;
*)
        echo "usage: tests/jail.sh root|user DIR CMD..." >&2
        exit 2
        ;;
esac
