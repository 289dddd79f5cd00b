#!/bin/bash
# tests/pod/run.sh: txbox in a container as deploy/pod.yaml runs it, on one machine, offline.
#
# Builds the agent image from deploy/Containerfile with no registry: its BASE is a small root
# filesystem made from this host's own binaries and libraries (sh, coreutils, diff) and
# imported into podman.  Then runs it with the manifests' security settings translated to
# podman options (hostUsers: false -> --uidmap; procMount: Unmasked -> unmask=ALL; the
# Localhost seccomp profile; all capabilities dropped; no privilege escalation; a read-only
# root; the workspace and state dir on one volume; a non-root user) and checks a commit, a
# rollback, an undo and doctor inside; then with podman's default settings, and with the
# runtime's default seccomp profile, checks that doctor names what is missing.
#
# The container is the jail here: read-only root, no network, only a throwaway directory
# writable, an unprivileged user; every command that changes something runs through txbox.
# TAP on stdout; skips (exit 0) when podman is missing or cannot run a container at all.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
IMAGE=localhost/txbox-agent:pod-test
# Limits below any hard limit: runc sets podman's defaults (about a million open files),
# which a host without CAP_SYS_RESOURCE (itself in a container) refuses to raise to.
LIM=(--ulimit nofile=8192:8192 --ulimit nproc=8192:8192)
TOOLS="sh dash cat ls rm mkdir rmdir mv cp ln touch chmod sleep head tail wc tr sed grep diff id env true false
       printf echo stat find sort uniq sha256sum cut test expr readlink basename dirname du df"
# Made again when the list changes (its tag is the list's hash); kept between runs otherwise.
BASE_IMAGE=localhost/txbox-pod-base:$(printf '%s' "$TOOLS" | sha256sum | cut -c1-12)
n=0 failed=0 skipped=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
check() { # check DESCRIPTION COMMAND...
        local d=$1
        shift
        if "$@"; then ok "$d"; else nok "$d"; fi
}
like() { # like GOT PATTERN DESCRIPTION
        if printf '%s' "$1" | grep -qE -- "$2"; then ok "$3"; else
                nok "$3"; printf '%s\n' "$1" | head -40 | sed 's/^/#   got: /'; echo "#   want match: $2"; fi
}
skip_all() {
        echo "1..0 # SKIP $1"
        echo "0 passed, 0 failed, 1 skipped"
        exit 0
}
finish() {
        echo "1..$n"
        echo "$((n - failed - skipped)) passed, $failed failed, $skipped skipped"
        [ "$failed" -eq 0 ]
        exit $?
}

command -v podman >/dev/null || skip_all "podman is not installed (apt-get install podman runc)"
[ -x "$BUILD/txbox" ] || { echo "Bail out! $BUILD/txbox is missing: run make first"; exit 1; }
[ "$(id -u)" -eq 0 ] || skip_all "run as root: the test maps the container's users to host ids (--uidmap)"

W=$(mktemp -d "${TMPDIR:-/tmp}/txbox-pod.XXXXXX") || exit 1
cleanup() {
        chmod -R u+rwX "$W" 2>/dev/null
        rm -rf "$W"
}
trap cleanup EXIT

# ---- the base: this host's sh, coreutils and diff with their libraries ----
if ! podman image exists "$BASE_IMAGE"; then
        R="$W/rootfs"
        mkdir -p "$R/usr/bin" "$R/usr/lib" "$R/usr/lib64" "$R/etc" "$R/tmp" "$R/proc" "$R/sys" "$R/dev" "$R/data"
        ln -s usr/bin "$R/bin" && ln -s usr/lib "$R/lib" && ln -s usr/lib64 "$R/lib64" && ln -s usr/bin "$R/usr/sbin"
        ln -s bin "$R/sbin" 2>/dev/null
        chmod 1777 "$R/tmp"
        for t in $TOOLS; do
                p=$(type -P "$t") || continue
                [ -f "$p" ] || continue
                cp -L "$p" "$R/usr/bin/$t"
                ldd "$p" 2>/dev/null | grep -oE '/[^ ]+' | while read -r lib; do
                        [ -e "$lib" ] && cp -L --parents "$lib" "$R" 2>/dev/null
                done
        done
        printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/data/home:/bin/sh\n' >"$R/etc/passwd"
        printf 'root:x:0:\nagent:x:1000:\n' >"$R/etc/group"
        if ! tar -C "$R" -c . | podman import -q - "$BASE_IMAGE" >"$W/import.log" 2>&1; then
                skip_all "podman cannot import an image here: $(tail -1 "$W/import.log")"
        fi
fi

# ---- the image, from deploy/Containerfile ----
C="$W/context"
mkdir -p "$C/build" "$C/docs" "$C/deploy"
cp "$BUILD/txbox" "$C/build/txbox"
cp docs/txbox.1 "$C/docs/txbox.1"
cp deploy/Containerfile "$C/deploy/Containerfile"
if ! podman build -q --pull=never --network=none --build-arg "BASE=$BASE_IMAGE" -f "$C/deploy/Containerfile" \
        -t "$IMAGE" "$C" >"$W/build.log" 2>&1; then
        if podman run --rm "${LIM[@]}" --network=none "$BASE_IMAGE" true >/dev/null 2>&1; then
                echo "Bail out! podman build of deploy/Containerfile failed:"; sed 's/^/# /' "$W/build.log"; exit 1
        fi
        skip_all "podman cannot run containers here: $(tail -1 "$W/build.log")"
fi
podman run --rm "${LIM[@]}" --network=none "$IMAGE" true >"$W/run.log" 2>&1 ||
        skip_all "podman cannot run a container here: $(tail -1 "$W/run.log")"
ok "deploy/Containerfile builds an image from a local base, without a registry"

# ---- the manifests' settings as podman options ----
# hostUsers: false: the pod's users map to unprivileged host ids (container uid 1000 = host
# 201000), so the volume belongs to that host id, as kubelet's idmapped mount makes it.
D="$W/data"
mkdir -p "$D/workspace" "$D/home"
printf 'hello\n' >"$D/workspace/notes.txt"
chown -R 201000:201000 "$D"
grep -q '"localhostProfile": "profiles/txbox.json"\|localhostProfile: profiles/txbox.json' deploy/pod.yaml ||
        nok "deploy/pod.yaml uses the profile this test loads"
secure=("${LIM[@]}" --network=none --uidmap 0:200000:65536 --gidmap 0:200000:65536 --user 1000:1000 --cap-drop=ALL
        --security-opt no-new-privileges --security-opt unmask=ALL --security-opt seccomp=deploy/seccomp/txbox.json
        --read-only --tmpfs /tmp:rw,size=64m,mode=1777 -v "$D:/data")
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] && command -v apparmor_parser >/dev/null &&
        apparmor_parser -r -W deploy/apparmor/txbox-agent 2>"$W/aa.log"; then
        secure+=(--security-opt apparmor=txbox-agent)
        ok "deploy/apparmor/txbox-agent loaded; the container runs under it"
elif command -v apparmor_parser >/dev/null; then
        # No AppArmor in this kernel: check that the profile parses (AppArmor 3 parsers know
        # neither the 4.0 abi nor the userns rule).
        prof=deploy/apparmor/txbox-agent
        if apparmor_parser --version | grep -q 'version [0-3]\.'; then
                grep -v -e '^abi <abi/4.0>,' -e '^  userns,$' deploy/apparmor/txbox-agent >"$W/aa3"
                prof="$W/aa3"
        fi
        if apparmor_parser -Q -K "$prof" 2>"$W/aa.log"; then
                ok "deploy/apparmor/txbox-agent parses (AppArmor is not enabled in this kernel: not loaded)"
        else
                nok "deploy/apparmor/txbox-agent parses"; sed 's/^/#   /' "$W/aa.log"
        fi
else
        n=$((n + 1)) skipped=$((skipped + 1))
        echo "ok $n - deploy/apparmor/txbox-agent # SKIP no AppArmor here and no apparmor_parser"
fi
inside() { podman run --rm "${secure[@]}" "$IMAGE" "$@"; }

# ---- doctor, then a commit, a rollback and an undo ----
out=$(inside txbox -C /data/workspace doctor 2>&1); rc=$?
check "doctor in the pod: exit 0" test "$rc" -eq 0
like "$out" "ok +own /proc" "doctor in the pod: the sandbox's own /proc works (procMount: Unmasked)"
like "$out" "ok +overlay on the workspace's fs" "doctor in the pod: the overlay works on the volume"
like "$out" "ok +state dir +/data/state/txbox/workspace-" "doctor in the pod: the state dir is on the volume"
like "$out" "user namespace mapping +a user namespace of its own: uid 0-65535 is host uid 200000-265535" \
        "doctor in the pod: the pod's user namespace is reported"
like "$out" "seccomp before txbox +mode 2" "doctor in the pod: the runtime's seccomp filter is reported"
like "$out" "container +a podman container" "doctor in the pod: the container is recognised"
json=$(inside txbox -C /data/workspace doctor --json 2>&1)
like "$json" '^\{"txbox":"[^"]+",.*"ok":true,"probes":\[' "doctor --json in the pod: ok"

script='set -u
T="txbox -C /data/workspace"
$T run -- sh -c "echo world >> notes.txt" || exit 11
[ "$(cat /data/workspace/notes.txt)" = "hello
world" ] || exit 12
$T run -- sh -c "rm notes.txt; echo junk > junk.txt; exit 3" 2>/dev/null; [ $? -eq 3 ] || exit 13
[ -e /data/workspace/notes.txt ] && [ ! -e /data/workspace/junk.txt ] || exit 14
$T run -- sh -c "echo x > /etc/motd" 2>/dev/null && exit 15
$T run --commit=keep -- sh -c "echo pending > p.txt" 2>/dev/null
id=$($T log --json -n 1 | sed -n "s/^\[{\"tx\": *\"\([0-9a-f]*\)\".*/\1/p")
[ ! -e /data/workspace/p.txt ] || exit 16
$T rollback "$id" >/dev/null || exit 17
$T undo >/dev/null || exit 18
[ "$(cat /data/workspace/notes.txt)" = "hello" ] || exit 19
$T log --json-lines | wc -l
echo done'
out=$(inside sh -c "$script" 2>&1); rc=$?
check "in the pod: a commit, a rollback (failed command, write outside the workspace, pending) and an undo (status $rc)" \
        test "$rc" -eq 0
like "$out" "^5
done$" "in the pod: the audit log streams five records"
check "the workspace on the volume is as the undo left it" test "$(cat "$D/workspace/notes.txt")" = hello
check "nothing of the rolled-back commands reached the volume" test ! -e "$D/workspace/junk.txt" -a ! -e "$D/workspace/p.txt"

# ---- podman's defaults: /proc masked ----
out=$(podman run --rm "${LIM[@]}" --network=none --user 1000:1000 -v "$D:/data" --uidmap 0:200000:65536 --gidmap 0:200000:65536 \
        "$IMAGE" txbox -C /data/workspace doctor 2>&1); rc=$?
check "default settings: doctor exits 1" test "$rc" -eq 1
like "$out" "MISSING +own /proc +mount of proc failed" "default settings: doctor says the sandbox's /proc cannot be mounted"
like "$out" "procMount: Unmasked" "default settings: doctor names procMount: Unmasked"
out=$(podman run --rm "${LIM[@]}" --network=none --user 1000:1000 -v "$D:/data" --uidmap 0:200000:65536 --gidmap 0:200000:65536 \
        "$IMAGE" txbox -C /data/workspace run -- true 2>&1); rc=$?
check "default settings: run fails as doctor said (125)" test "$rc" -eq 125

# ---- the workspace on the container's own root ----
out=$(podman run --rm "${LIM[@]}" --network=none --user 1000:1000 --security-opt unmask=ALL --uidmap 0:200000:65536 \
        --gidmap 0:200000:65536 --tmpfs /tmp:rw,size=8m,mode=1777 "$IMAGE" \
        sh -c 'mkdir -p /tmp/x && cd / && HOME=/tmp XDG_STATE_HOME=/tmp/state txbox -C /usr doctor' 2>&1)
like "$out" "missing +workspace filesystem +overlay" "a workspace on the container's overlay root: doctor warns"

# ---- the runtime's default seccomp profile: the same file without txbox's additions ----
# Drop the one entry that carries txbox's comment: what is left is containerd's default.
tr '\n' '\r' <deploy/seccomp/txbox.json |
        sed -e 's/,\r *{\r *"names": \[\r[^]]*\],\r *"action": "SCMP_ACT_ALLOW",\r *"comment": "txbox:[^"]*"\r *}//' |
        tr '\r' '\n' >"$W/default.json"
check "the runtime-default profile differs from deploy/seccomp/txbox.json only by txbox's entry" \
        sh -c "! grep -q '\"unshare\"' '$W/default.json' && grep -q '\"unshare\"' deploy/seccomp/txbox.json"
out=$(podman run --rm "${secure[@]/deploy\/seccomp\/txbox.json/$W/default.json}" "$IMAGE" \
        txbox -C /data/workspace doctor 2>&1); rc=$?
check "runtime-default seccomp: doctor exits 1" test "$rc" -eq 1
like "$out" "MISSING +user namespaces +unshare or its uid map failed: Operation not permitted" \
        "runtime-default seccomp: doctor says the user namespace is refused"
like "$out" "deploy/seccomp/txbox.json" "runtime-default seccomp: the hint names deploy/seccomp/txbox.json"

podman image rm -f "$IMAGE" >/dev/null 2>&1
finish
