#!/bin/bash
# txbox doctor tells the truth where it runs: outside containers every essential probe holds
# and run works; where /proc is masked, the state dir has nowhere to go, the workspace is on
# an overlay or root has no capabilities (what a container does), doctor names what is
# missing and the setting that brings it back, and run fails as doctor said.
. "$(dirname "$0")/lib.sh"

new_ws
out=$(tx doctor 2>&1); rc=$?
is "$rc" 0 "doctor in the jail: exit 0 (every essential protection holds)"
like "$out" "ok +overlay on the workspace's fs" "the overlay is probed on the workspace's filesystem"
like "$out" "ok +own /proc" "the sandbox's own /proc is probed"
like "$out" "ok +state dir +$HOME/.local/state/txbox/ws-" "the state dir it would use is named"
like "$out" "workspace filesystem" "the workspace's filesystem type is reported"
like "$out" "user namespace mapping" "the user-namespace mapping is reported"
like "$out" "seccomp before txbox +(none|mode)" "the seccomp mode is reported"
like "$out" "security label" "the security label is reported"
ok "what doctor promised holds: run commits" tx run -- sh -c 'echo doctor > d.txt'
is "$(cat "$WS/d.txt")" doctor "the command's write landed"
ok "doctor left nothing next to the state dir" \
        sh -c "! ls -A '$HOME/.local/state/txbox' | grep -q txbox-doctor"

json=$(tx doctor --json); rc=$?
is "$rc" 0 "doctor --json: exit 0"
like "$json" '^\{"txbox":"[0-9.]+","kernel":"[^"]+","root":(true|false),"workspace":"[^"]+","ok":true,"probes":\[\{"name":"state dir","ok":true,"essential":true,"detail":"[^"]*","cost":null\}' \
        "doctor --json: one object, ok, probes with name/ok/essential/detail/cost"
is "$(printf '%s' "$json" | grep -o '"name":' | wc -l)" "$(printf '%s\n' "$out" | grep -cE '^  (ok|missing|MISSING) ')" \
        "doctor --json has as many probes as the text"
is "$(printf '%s' "$json" | wc -l)" 0 "doctor --json is one line"
out=$(tx doctor --bogus 2>&1); is "$?" 2 "doctor --bogus: exit 2"
out=$(tx doctor --help); like "$out" "Usage: txbox .*doctor \[--json\]" "doctor --help"

# A state dir on another mount: commits could not be renames.
out=$("$TXBOX" -C "$WS" --state /dev/shm/txbox-doctor-state doctor 2>&1); rc=$?
is "$rc" 1 "doctor with --state on another mount: exit 1"
like "$out" "MISSING +state dir .*another filesystem" "and the state dir is named MISSING"
ok "doctor created no state dir there" test ! -e /dev/shm/txbox-doctor-state
out=$("$TXBOX" -C "$T/no-such-dir" doctor 2>&1); rc=$?
is "$rc" 1 "doctor -C on a missing directory: exit 1"
like "$out" "MISSING +workspace .*no-such-dir" "and says which workspace is missing"

if [ "$(id -u)" -ne 0 ]; then
        for d in "masked /proc" "workspace on an overlay" "workspace on tmpfs" "root without capabilities"; do
                skip "doctor with $d" "needs root in the jail to build it"
        done
        done_testing
fi

# What a container runtime does to /proc: a path covered by root, locked for the user.
U="setpriv --reuid=54321 --regid=54321 --clear-groups env HOME=$T/uhome"
mkdir -p "$T/uhome" "$T/uws" && chown 54321:54321 "$T/uhome" "$T/uws"
out=$(unshare -m --propagation private sh -c "mount --bind /dev/null /proc/timer_list && cd '$T/uws' && $U '$TXBOX' doctor" 2>&1)
rc=$?
is "$rc" 1 "masked /proc: doctor exits 1"
like "$out" "MISSING +own /proc +mount of proc failed: .*covered \(/proc/timer_list\)" "masked /proc: the probe names the covered path"
like "$out" "procMount: Unmasked" "masked /proc: the hint names procMount: Unmasked"
out=$(unshare -m --propagation private sh -c "mount --bind /dev/null /proc/timer_list && cd '$T/uws' && $U '$TXBOX' run -- true" 2>&1)
rc=$?
is "$rc" 125 "masked /proc: run fails as doctor said (125)"
like "$out" "cannot mount the sandbox's own /proc.*procMount: Unmasked" "masked /proc: run's error names the setting"

# The workspace and state dir on an overlay (a container's own root).
mkdir -p "$T/ol/l" "$T/ol/u" "$T/ol/w" "$T/ol/m"
if mount -t overlay overlay -o "lowerdir=$T/ol/l,upperdir=$T/ol/u,workdir=$T/ol/w" "$T/ol/m" 2>/dev/null; then
        mkdir -p "$T/ol/m/ws"
        out=$("$TXBOX" -C "$T/ol/m/ws" --state "$T/ol/m/state" doctor 2>&1); rc=$?
        is "$rc" 1 "workspace on an overlay: doctor exits 1"
        like "$out" "missing +workspace filesystem +overlay" "workspace on an overlay: its filesystem is warned about"
        like "$out" "MISSING +overlay on the workspace's fs" "workspace on an overlay: the overlay probe fails there"
        umount "$T/ol/m"
else
        skip "workspace on an overlay" "cannot mount an overlay here"
fi

# tmpfs holds an overlay's layers (user xattrs since Linux 6.6).
mkdir -p "$T/tm" && mount -t tmpfs -o size=8m tmpfs "$T/tm" && mkdir -p "$T/tm/ws" "$T/tm/state"
out=$("$TXBOX" -C "$T/tm/ws" --state "$T/tm/state" doctor 2>&1); rc=$?
if printf '%s' "$out" | grep -qE "ok +overlay on the workspace's fs"; then
        is "$rc" 0 "workspace on tmpfs: doctor exits 0"
        like "$out" "ok +workspace filesystem +tmpfs" "workspace on tmpfs: reported as tmpfs"
        ok "workspace on tmpfs: run commits" "$TXBOX" -C "$T/tm/ws" --state "$T/tm/state" run -- sh -c 'echo t > t'
else
        like "$out" "MISSING +overlay on the workspace's fs" "workspace on tmpfs without user xattrs: the overlay probe says so"
        out=$("$TXBOX" -C "$T/tm/ws" --state "$T/tm/state" run -- true 2>&1)
        is "$?" 125 "workspace on tmpfs without user xattrs: run fails as doctor said"
fi
umount "$T/tm"

# Root with every capability dropped cannot map root into the sandbox.
out=$(cd "$WS" && setpriv --bounding-set=-all --inh-caps=-all -- "$TXBOX" doctor 2>&1); rc=$?
is "$rc" 1 "root without capabilities: doctor exits 1"
like "$out" "MISSING +user namespace mapping +uid 0 without CAP_SETFCAP" "root without capabilities: the mapping is MISSING"
like "$out" "cost: .*run it as a non-root user \(Kubernetes: securityContext.runAsUser" "root without capabilities: the hint says to run as a non-root user"
out=$(cd "$WS" && setpriv --bounding-set=-all --inh-caps=-all -- "$TXBOX" run -- true 2>&1)
is "$?" 125 "root without capabilities: run fails as doctor said"

done_testing
