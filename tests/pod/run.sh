#!/bin/bash
# tests/pod/run.sh (make check-pod): deploy/ checked against upstream, and run with podman.
#
# Without podman (any user):
#   - the pinned upstream data (tests/pod/upstream/SOURCES) is what it says it is;
#   - deploy/seccomp/<arch>/txbox.json is scripts/seccomp-profile.py's output: containerd
#     2.3.4's default plus txbox's documented delta, nothing else;
#   - every kustomization renders (tests/pod/k8s.py, compared with `kubectl kustomize` where
#     kubectl is installed), and every object validates strictly against Kubernetes 1.33
#     and 1.36 and agent-sandbox v0.5.0 and v0.5.6 (unknown fields rejected; both API
#     versions where both are served); the validator refuses a set of broken objects;
#   - the overlays differ as their names say; the Pod and the SandboxTemplate run one pod;
#   - deploy/apparmor/txbox-agent: the form for this machine's parser compiles with it
#     (Debian 12: AppArmor 3.0.8, which knows neither the 4.0 abi nor userns and mqueue
#     rules: the AppArmor 3 form, the shipped file without its three lines marked "AppArmor
#     4 only"; a parser of 4 or later compiles the shipped file as it is);
#   - each file and command docs/KUBERNETES.md names exists and validates.
# With podman, as root (runc; the container is the jail: read-only root, no network, only a
# throwaway directory writable, an unprivileged user):
#   - the image builds from deploy/Containerfile without a registry (its base made from this
#     host's binaries);
#   - deploy/node's installer, run as its DaemonSet runs it, puts the profile in place;
#   - the Pod and the SandboxTemplate's pod, each container run with podman options
#     GENERATED from the manifest (k8s.py podman): seed clones the workspace, the agent's
#     startup probe (txbox doctor) passes, txbox commits, rolls back and undoes while the
#     audit-log sidecar follows the same volume, the shipper filter keeps the last line per
#     transaction, and PID 1 of each exits on SIGTERM (podman stop's time is printed);
#   - without each of txbox's seccomp additions, what needs it fails; with podman's defaults
#     and the runtime's default profile, txbox doctor names what is missing.
# TAP on stdout; "N passed, N failed, N skipped" at the end.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
PY=/usr/bin/python3
K8S=(${PY} tests/pod/k8s.py)
IMAGE=localhost/txbox-agent:pod-test
LIM=(--ulimit nofile=8192:8192 --ulimit nproc=8192:8192)
TOOLS="sh dash cat ls rm mkdir rmdir mv cp ln touch chmod sleep head tail wc tr sed grep diff id env true false
       printf echo stat find sort uniq sha256sum cut test expr readlink basename dirname du df git uname
       mktemp nsenter"
BASE_IMAGE=localhost/txbox-pod-base:$(printf '%s' "$TOOLS" | sha256sum | cut -c1-12)
n=0 failed=0 skipped=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
skip() { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n - $1 # SKIP $2"; }
check() { # check DESCRIPTION COMMAND...
        local d=$1
        shift
        if "$@"; then ok "$d"; else nok "$d"; fi
}
checkout() { # checkout DESCRIPTION COMMAND...: like check, showing the command's output when it fails
        local d=$1 out
        shift
        if out=$("$@" 2>&1); then ok "$d"; else nok "$d"; printf '%s\n' "$out" | head -30 | sed 's/^/#   /'; fi
}
like() { # like GOT PATTERN DESCRIPTION
        if printf '%s' "$1" | grep -qE -- "$2"; then ok "$3"; else
                nok "$3"; printf '%s\n' "$1" | head -40 | sed 's/^/#   got: /'; echo "#   want match: $2"; fi
}
finish() {
        echo "1..$n"
        echo "$((n - failed - skipped)) passed, $failed failed, $skipped skipped"
        [ "$failed" -eq 0 ]
        exit $?
}

$PY -c 'import yaml' 2>/dev/null || { echo "Bail out! python3-yaml is missing: scripts/deps.sh --pod"; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/txbox-pod.XXXXXX") || exit 1
CONTAINERS=()
cleanup() {
        for c in "${CONTAINERS[@]}"; do podman rm -f "$c" >/dev/null 2>&1; done
        chmod -R u+rwX "$W" 2>/dev/null
        rm -rf "$W"
}
trap cleanup EXIT

# ================================================================ without podman

# ---- pinned upstream data ----
bad=""
while read -r f blob _; do
        case $f in '#'* | '') continue ;; esac
        [ "$(git hash-object "tests/pod/upstream/$f" 2>/dev/null)" = "$blob" ] || bad="$bad $f"
done <tests/pod/upstream/SOURCES
check "tests/pod/upstream: every pinned file has the blob id SOURCES records${bad:+ (differ:$bad)}" test -z "$bad"

# ---- seccomp ----
checkout "deploy/seccomp/{amd64,arm64}/txbox.json are scripts/seccomp-profile.py's output" $PY scripts/seccomp-profile.py --check
seccomp_facts() { # ARCH: what containerd 2.x's default has and txbox keeps
        $PY - "$1" <<'EOF'
import json, sys
arch = sys.argv[1]
p = json.load(open("deploy/seccomp/%s/txbox.json" % arch))
d = json.load(open("deploy/seccomp/containerd-default.json"))["profiles"][arch]
names = lambda ents: {n for e in ents for n in e["names"]}
allowed = names(e for e in p["syscalls"] if e["action"] == "SCMP_ACT_ALLOW" and not e.get("args"))
assert p["syscalls"][:len(d["syscalls"])] == d["syscalls"], "the default is not kept whole"
extra = p["syscalls"][len(d["syscalls"]):]
assert all(e["comment"].startswith("txbox: ") and e["action"] == "SCMP_ACT_ALLOW" and "args" not in e for e in extra)
assert not allowed & {"io_uring_setup", "io_uring_enter", "io_uring_register"}, "io_uring allowed"
assert {"fchmodat2", "futex_wait", "mseal", "landlock_create_ruleset", "seccomp"} <= allowed, "newer calls missing"
assert not any(e["names"] == ["socket"] and not e.get("args") for e in p["syscalls"]), "socket unrestricted"
assert names(extra) == {"clone", "unshare", "setns", "mount", "fsopen", "fsconfig", "fsmount", "move_mount",
                        "mount_setattr", "sethostname"}, names(extra)
assert p["architectures"] == {"amd64": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
                              "arm64": ["SCMP_ARCH_ARM", "SCMP_ARCH_AARCH64"]}[arch]
EOF
}
for a in amd64 arm64; do
        checkout "seccomp $a: containerd's default whole (io_uring refused, socket families filtered, fchmodat2 mseal futex_wait allowed) plus exactly txbox's ten calls" seccomp_facts $a
done

# ---- manifests ----
checkout "the validator refuses unknown fields, wrong types, missing required fields, duplicates and v1alpha1 claims" \
        "${K8S[@]}" selftest deploy
KUSTOMIZATIONS=$(find deploy -name kustomization.yaml -printf '%h\n' | sort)
for d in $KUSTOMIZATIONS; do
        grep -q '^kind: Component' "$d/kustomization.yaml" && continue
        checkout "$d renders and every object validates strictly (Kubernetes 1.33, 1.36; agent-sandbox v0.5.0, v0.5.6)" \
                "${K8S[@]}" validate "$d"
done
for f in deploy/claims/*.yaml; do
        checkout "$f validates strictly (v1beta1 of agent-sandbox v0.5.0 and v0.5.6)" "${K8S[@]}" validate "$f"
        checkout "$f has no v1alpha1 form (its warmPoolRef is v1beta1's)" \
                "${K8S[@]}" expect-invalid "$f" extensions.agents.x-k8s.io/v1alpha1
done
same_as_kubectl() { # DIR
        $PY - "$1" <<'EOF'
import json, subprocess, sys, yaml
sys.path.insert(0, "tests/pod")
import k8s
mine = sorted(json.dumps(o, sort_keys=True) for o in k8s.render(sys.argv[1]))
out = subprocess.run(["kubectl", "kustomize", sys.argv[1]], capture_output=True, text=True, check=True).stdout
theirs = sorted(json.dumps(o, sort_keys=True) for o in yaml.safe_load_all(out) if o)
sys.exit(0 if mine == theirs else "k8s.py and kubectl kustomize differ")
EOF
}
if command -v kubectl >/dev/null && kubectl kustomize deploy/overlays/pod >/dev/null 2>&1; then
        for d in $KUSTOMIZATIONS; do
                grep -q '^kind: Component' "$d/kustomization.yaml" && continue
                checkout "$d: k8s.py renders what kubectl kustomize renders" same_as_kubectl "$d"
        done
else
        skip "k8s.py renders what kubectl kustomize renders" "kubectl is not installed (not a Debian 12 package)"
fi
overlay_facts() {
        $PY - <<'EOF'
import sys
sys.path.insert(0, "tests/pod")
import k8s
def spec(d, kind):
    return k8s.pod_spec(k8s.find(k8s.render("deploy/overlays/" + d), kind))
for d, kind in [("pod", "Pod"), ("pod-apparmor", "Pod"), ("agent-sandbox", "SandboxTemplate"),
                ("agent-sandbox-apparmor", "SandboxTemplate"), ("agent-sandbox-arm64", "SandboxTemplate"),
                ("agent-sandbox-arm64-apparmor", "SandboxTemplate")]:
    s = spec(d, kind)
    aa = s["securityContext"].get("appArmorProfile")
    assert (aa == {"type": "Localhost", "localhostProfile": "txbox-agent"}) == ("apparmor" in d), (d, aa)
    assert s["nodeSelector"] == {"txbox/agents": "true", "kubernetes.io/arch": "arm64" if "arm64" in d else "amd64"}, d
    assert s["securityContext"]["seccompProfile"] == {"type": "Localhost", "localhostProfile": "profiles/txbox.json"}
    assert s["securityContext"]["fsGroupChangePolicy"] == "OnRootMismatch"
    assert s["hostUsers"] is False and s["automountServiceAccountToken"] is False
    for c in s["initContainers"] + s["containers"]:
        env = {e["name"]: e["value"] for e in c["env"]}
        assert env["HOME"] == "/data/home", (d, c["name"])
        assert c["name"] == "seed" or env["XDG_STATE_HOME"] == "/data/state", (d, c["name"])
        assert c["workingDir"].startswith("/data"), (d, c["name"])
    agent = [c for c in s["containers"] if c["name"] == "agent"][0]
    assert agent["startupProbe"]["exec"]["command"] == ["txbox", "-C", "/data/workspace", "doctor"]
    assert agent["securityContext"]["procMount"] == "Unmasked"
# The Pod and the SandboxTemplate run one pod: the same spec but for the data volume,
# which the template's volumeClaimTemplates provides.
p, t = spec("pod", "Pod"), spec("agent-sandbox", "SandboxTemplate")
strip = lambda s: {k: v for k, v in s.items() if k != "volumes"}
assert strip(p) == strip(t), "the Pod and the SandboxTemplate's pod differ"
assert [v["name"] for v in p["volumes"]] == ["data", "tmp"] and sorted(v["name"] for v in t["volumes"]) == ["data", "tmp"]
EOF
}
checkout "overlays: AppArmor only in the -apparmor ones, arm64 only in the -arm64 ones; explicit HOME, XDG_STATE_HOME, workingDir; OnRootMismatch; the Pod and the SandboxTemplate run the same pod" overlay_facts

# ---- AppArmor ----
SHARE="$W/share"
mkdir -p "$SHARE/apparmor"
cp deploy/apparmor/txbox-agent "$SHARE/apparmor/"
aa_for() { TXBOX_SHARE="$SHARE" sh deploy/node/install-node-profiles --apparmor-for "$1"; }
aa_for 3 >"$W/aa3" && aa_for 4 >"$W/aa4"
check "AppArmor: the AppArmor 4 form is the shipped file" cmp -s "$W/aa4" deploy/apparmor/txbox-agent
check "AppArmor: the AppArmor 3 form lacks exactly the abi 4.0, userns and mqueue lines" \
        test "$(diff "$W/aa3" deploy/apparmor/txbox-agent | grep '^>' | sed 's/^> *//')" = \
        "$(printf '%s\n' 'abi <abi/4.0>, # AppArmor 4 only' 'userns, # AppArmor 4 only' 'mqueue, # AppArmor 4 only')"
for r in 'signal (receive) peer=runc,' 'signal (receive) peer=crun,' 'signal (receive) peer=unconfined,'; do
        check "AppArmor: '$r' (a pod under AppArmor 4 otherwise hangs in Terminating)" grep -qF "  $r" deploy/apparmor/txbox-agent
done
AA_MAJOR=""
if command -v apparmor_parser >/dev/null; then
        AA_MAJOR=$(apparmor_parser --version | sed -n '1s/.*version \([0-9][0-9]*\)\..*/\1/p')
        if [ "$AA_MAJOR" -ge 4 ]; then
                checkout "AppArmor: the shipped profile compiles with apparmor_parser $AA_MAJOR" apparmor_parser -Q -K deploy/apparmor/txbox-agent
                skip "AppArmor: the AppArmor 3 form compiles" "apparmor_parser is $AA_MAJOR here"
        else
                checkout "AppArmor: the AppArmor 3 form compiles with apparmor_parser $AA_MAJOR" apparmor_parser -Q -K "$W/aa3"
                skip "AppArmor: the shipped profile (AppArmor 4 syntax) compiles" "apparmor_parser is $AA_MAJOR here; a 4.x parser (Ubuntu 24.04, Debian 13) compiles it"
        fi
else
        skip "AppArmor: the profile compiles" "no apparmor_parser (apt-get install apparmor)"
fi

# ---- what docs/KUBERNETES.md tells an operator to run ----
docs_facts() {
        $PY - <<'EOF'
import os, re, subprocess, sys
sys.path.insert(0, "tests/pod")
import k8s
doc = open("docs/KUBERNETES.md").read()
cmds, inside = [], False
for l in doc.splitlines():
    if l.strip().startswith("```"):
        inside = not inside
    elif inside and l.strip() and not l.strip().startswith("#"):
        cmds.append(l.strip())
paths = set()
for c in cmds:
    for m in re.finditer(r"(?:apply|create|delete)(?: -n \S+)? -([kf]) (deploy/\S+)", c):
        kind, p = m.groups()
        assert os.path.isdir(p) if kind == "k" else os.path.isfile(p), c
        paths.add(p)
    for m in re.finditer(r"kubectl label node \S+ (\S+)=(\S+)", c):
        for d in ["deploy/overlays/pod", "deploy/overlays/agent-sandbox", "deploy/node"]:
            objs = k8s.render(d)
            sel = [o for o in objs if o["kind"] in ("Pod", "SandboxTemplate", "DaemonSet")][0]
            ns = k8s.pod_spec(sel)["nodeSelector"]
            assert ns.get(m.group(1)) == m.group(2), (c, d, ns)
    for m in re.finditer(r"(deploy/\S+|scripts/\S+|tests/\S+)", c):
        assert os.path.exists(m.group(1).rstrip(";,)'\"")), c
for p in paths:
    r = subprocess.run([sys.executable, "tests/pod/k8s.py", "validate", p], capture_output=True, text=True)
    assert r.returncode == 0, (p, r.stdout)
# Every deploy/ path the prose names exists.
for m in re.finditer(r"`(deploy/[^`\s]+)`", doc):
    p = m.group(1).replace("<arch>", "amd64")
    assert os.path.exists(p), p
assert len(paths) >= 5, paths
EOF
}
checkout "docs/KUBERNETES.md: every kubectl apply/create path exists and validates, its node label is the manifests' nodeSelector, every deploy/ path it names exists" docs_facts

# ================================================================ with podman

if ! command -v podman >/dev/null; then
        skip "podman runs" "podman is not installed (apt-get install podman runc)"
        finish
fi
[ -x "$BUILD/txbox" ] || { echo "Bail out! $BUILD/txbox is missing: run make first"; exit 1; }
if [ "$(id -u)" -ne 0 ]; then
        skip "podman runs" "run as root: the test maps the container's users to host ids (--uidmap)"
        finish
fi
command -v jq >/dev/null || { echo "Bail out! jq is missing: scripts/deps.sh --pod"; exit 1; }

# ---- the base: this host's tools with their libraries ----
if ! podman image exists "$BASE_IMAGE"; then
        R="$W/rootfs"
        mkdir -p "$R/usr/bin" "$R/usr/lib" "$R/usr/lib64" "$R/etc" "$R/tmp" "$R/proc" "$R/sys" "$R/dev" "$R/data" \
                "$R/usr/lib/git-core"
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
        # git clone of a local repository runs git-upload-pack from git's exec path.
        ln -s ../../bin/git "$R/usr/lib/git-core/git-upload-pack"
        ln -s ../../bin/git "$R/usr/lib/git-core/git"
        printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:1000:1000:agent:/data/home:/bin/sh\nnobody:x:65534:65534::/:/bin/sh\n' >"$R/etc/passwd"
        printf 'root:x:0:\nagent:x:1000:\nnogroup:x:65534:\n' >"$R/etc/group"
        if ! tar -C "$R" -c . | podman import -q - "$BASE_IMAGE" >"$W/import.log" 2>&1; then
                skip "podman runs" "podman cannot import an image here: $(tail -1 "$W/import.log")"
                finish
        fi
fi

# ---- the image, from deploy/Containerfile ----
C="$W/context"
mkdir -p "$C/build" "$C/docs"
cp "$BUILD/txbox" "$C/build/txbox"
cp docs/txbox.1 "$C/docs/txbox.1"
cp -r deploy "$C/deploy"
if ! podman build -q --pull=never --network=none --build-arg "BASE=$BASE_IMAGE" -f "$C/deploy/Containerfile" \
        -t "$IMAGE" "$C" >"$W/build.log" 2>&1; then
        if podman run --rm "${LIM[@]}" --network=none "$BASE_IMAGE" true >/dev/null 2>&1; then
                echo "Bail out! podman build of deploy/Containerfile failed:"; sed 's/^/# /' "$W/build.log"; exit 1
        fi
        skip "podman runs" "podman cannot run containers here: $(tail -1 "$W/build.log")"
        finish
fi
if ! podman run --rm "${LIM[@]}" --network=none "$IMAGE" true >"$W/run.log" 2>&1; then
        skip "podman runs" "podman cannot run a container here: $(tail -1 "$W/run.log")"
        finish
fi
ok "deploy/Containerfile builds an image from a local base, without a registry"
MAP=(--image-map "localhost/txbox-agent:latest=$IMAGE")

# ---- node preparation, as deploy/node's DaemonSet runs it ----
NODE="$W/node"
mkdir -p "$NODE/var/lib/kubelet/seccomp" "$NODE/etc/apparmor.d"
mapfile -d '' -t nargs < <("${K8S[@]}" podman deploy/node DaemonSet install "${MAP[@]}" \
        --volume "kubelet-seccomp=$NODE/var/lib/kubelet/seccomp" --volume "apparmor-d=$NODE/etc/apparmor.d")
# On a host with AppArmor the installer would load the profile into this host's kernel from
# the host's /etc/apparmor.d: hide AppArmor from it; the test loads the profile itself below.
mask=()
[ -e /sys/module/apparmor/parameters/enabled ] && mask=(--security-opt mask=/sys/module/apparmor/parameters/enabled)
out=$(podman run --rm "${LIM[@]}" --network=none "${mask[@]}" "${nargs[@]}" 2>&1); rc=$?
case $(uname -m) in x86_64) ARCH=amd64 ;; aarch64) ARCH=arm64 ;; *) ARCH=unknown ;; esac
check "deploy/node: the installer, run with the DaemonSet's settings, exits 0 (status $rc)" test "$rc" -eq 0
check "deploy/node: it puts deploy/seccomp/$ARCH/txbox.json at <kubelet>/seccomp/profiles/txbox.json" \
        cmp -s "$NODE/var/lib/kubelet/seccomp/profiles/txbox.json" "deploy/seccomp/$ARCH/txbox.json"
like "$out" "seccomp profile for $ARCH in place" "deploy/node: the installer says what it installed"
SECCOMP_ROOT="$NODE/var/lib/kubelet/seccomp"

AA=no
if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] && [ -n "$AA_MAJOR" ]; then
        aa_for "$AA_MAJOR" >"$W/aa-load"
        if apparmor_parser -r -W "$W/aa-load" 2>"$W/aa.log"; then
                AA=yes
                ok "AppArmor: the profile for parser $AA_MAJOR loaded; the -apparmor overlays run under it"
        else
                nok "AppArmor: the profile for parser $AA_MAJOR loads"; sed 's/^/#   /' "$W/aa.log"
        fi
else
        skip "AppArmor: the -apparmor overlays run under the profile" "this kernel does not run AppArmor"
fi

# ---- a pod, run container by container with options generated from its manifest ----
SEED="$W/seed"
git init -q -b main "$SEED/src" && git -C "$SEED/src" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init &&
        printf 'hello\n' >"$SEED/src/notes.txt" && git -C "$SEED/src" add notes.txt &&
        git -C "$SEED/src" -c user.name=t -c user.email=t@t commit -q -m notes &&
        git clone -q --bare "$SEED/src" "$SEED/seed.git" || { echo "Bail out! cannot make the seed repository"; exit 1; }

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
[ "$($T run -- cat /proc/sys/kernel/hostname)" = txbox ] || exit 20
echo done'

stop_timed() { # NAME: podman stop with the manifest's grace period; prints "SECONDS STATUS"
        local t0 t1
        t0=$(date +%s%N)
        podman stop -t 30 "$1" >/dev/null 2>&1
        t1=$(date +%s%N)
        echo "$(((t1 - t0) / 1000000000)).$((((t1 - t0) / 100000000) % 10)) $(podman inspect -f '{{.State.ExitCode}}' "$1")"
}

run_pod() { # LABEL DIR KIND: the whole pod
        local label=$1 dir=$2 kind=$3 D="$W/data-$1" name="txbox-pod-$$-$1"
        mkdir -p "$D"
        cp -r "$SEED/seed.git" "$D/seed.git"
        chown -R 201000:201000 "$D"
        local common=("${MAP[@]}" --seccomp-root "$SECCOMP_ROOT" --apparmor "$AA" --volume "data=$D" --userns-base 200000)
        local seed side agent probe
        mapfile -d '' -t seed < <("${K8S[@]}" podman "$dir" "$kind" seed "${common[@]}" \
                --set-env SEED_REPO=/data/seed.git --set-env SEED_REF=main) || { nok "$label: podman options for seed"; return; }
        mapfile -d '' -t side < <("${K8S[@]}" podman "$dir" "$kind" audit-log "${common[@]}")
        mapfile -d '' -t agent < <("${K8S[@]}" podman "$dir" "$kind" agent "${common[@]}")
        mapfile -d '' -t probe < <("${K8S[@]}" probe "$dir" "$kind" agent startupProbe)
        local out rc
        out=$(podman run --rm --network=none "${LIM[@]}" "${seed[@]}" 2>&1); rc=$?
        check "$label: seed clones SEED_REPO at SEED_REF into the empty workspace (status $rc)" \
                test "$rc" -eq 0 -a "$(cat "$D/workspace/notes.txt" 2>/dev/null)" = hello -a -d "$D/workspace/.git"
        [ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
        out=$(podman run --rm --network=none "${LIM[@]}" "${seed[@]}" 2>&1); rc=$?
        check "$label: seed again (a restarted pod) leaves the workspace as it is (status $rc)" test "$rc" -eq 0
        CONTAINERS+=("$name-side" "$name-agent")
        podman run -d --name "$name-side" --network=none "${LIM[@]}" "${side[@]}" >/dev/null 2>"$W/side.err" ||
                { nok "$label: the audit-log sidecar starts"; sed 's/^/#   /' "$W/side.err"; return; }
        podman run -d --name "$name-agent" --network=none "${LIM[@]}" "${agent[@]}" >/dev/null 2>"$W/agent.err" ||
                { nok "$label: the agent starts"; sed 's/^/#   /' "$W/agent.err"; return; }
        out=$(podman exec "$name-agent" "${probe[@]}" 2>&1); rc=$?
        check "$label: the startup probe (txbox doctor) passes (status $rc)" test "$rc" -eq 0
        like "$out" "ok +own /proc" "$label: doctor: the sandbox's own /proc works (procMount: Unmasked)"
        like "$out" "ok +overlay on the workspace's fs" "$label: doctor: the overlay works on the volume"
        like "$out" "ok +state dir +/data/state/txbox/workspace-" "$label: doctor: the state dir is on the volume (XDG_STATE_HOME)"
        like "$out" "seccomp before txbox +mode 2" "$label: doctor: the Localhost seccomp profile is in force"
        out=$(podman exec "$name-agent" sh -c "$script" 2>&1); rc=$?
        check "$label: a commit, rollbacks (failed command, write outside the workspace, pending), an undo, the sandbox's hostname (status $rc)" \
                test "$rc" -eq 0
        [ "$rc" -eq 0 ] || printf '%s\n' "$out" | sed 's/^/#   /'
        check "$label: the workspace on the volume is as the undo left it" test "$(cat "$D/workspace/notes.txt")" = hello
        check "$label: nothing of the rolled-back commands reached the volume" test ! -e "$D/workspace/junk.txt" -a ! -e "$D/workspace/p.txt"
        # The sidecar follows the same volume: every change, then the last state per transaction.
        local i lines
        for i in $(seq 50); do
                lines=$(podman logs "$name-side" 2>/dev/null | grep -c '^{"seq"')
                [ "$lines" -ge 7 ] && break
                sleep 0.2
        done
        podman logs "$name-side" 2>/dev/null | grep '^{"seq"' >"$W/$label.stream"
        check "$label: the audit-log sidecar streamed the changes ($lines lines)" test "$lines" -ge 7
        jq -n -c -f deploy/logs/last-per-tx.jq "$W/$label.stream" >"$W/$label.last"
        local want
        want=$(podman exec "$name-agent" txbox -C /data/workspace log --json | jq -r '.[] | "\(.tx) \(.outcome)"' | sort)
        check "$label: deploy/logs/last-per-tx.jq keeps one line per transaction, in its final state" \
                test "$(jq -r '"\(.tx) \(.outcome)"' "$W/$label.last" | sort)" = "$want" -a -n "$want"
        # PID 1 of each container exits on SIGTERM, well within the grace period.
        local st
        st=$(stop_timed "$name-agent")
        check "$label: the agent's PID 1 exits on SIGTERM with status 0, not SIGKILL's 137 (podman stop: ${st% *} s)" test "${st#* }" = 0
        st=$(stop_timed "$name-side")
        check "$label: the audit-log sidecar exits on SIGTERM with status 0 (podman stop: ${st% *} s)" test "${st#* }" = 0
        local cursor
        cursor=$(cat "$D/audit.cursor" 2>/dev/null)
        check "$label: the sidecar's cursor on the volume holds the last change it printed ($cursor)" \
                test -n "$cursor" -a "$cursor" = "$(tail -1 "$W/$label.stream" | jq .seq)"
        podman rm -f "$name-side" >/dev/null 2>&1
        podman run -d --name "$name-side" --network=none "${LIM[@]}" "${side[@]}" >/dev/null 2>&1
        sleep 1
        check "$label: a restarted sidecar resumes after its cursor (prints nothing old)" \
                test "$(podman logs "$name-side" 2>/dev/null | grep -c '^{"seq"')" -eq 0
        podman rm -f "$name-side" "$name-agent" >/dev/null 2>&1
}

for o in pod:Pod agent-sandbox:SandboxTemplate pod-apparmor:Pod agent-sandbox-apparmor:SandboxTemplate; do
        ov=${o%%:*} kind=${o#*:}
        if [ "$AA" = no ] && [ "${ov%-apparmor}" != "$ov" ]; then
                skip "deploy/overlays/$ov: the pod runs" "this host cannot load the AppArmor profile"
                continue
        fi
        run_pod "$ov" "deploy/overlays/$ov" "$kind"
done

# ---- without each of txbox's seccomp additions, what needs it fails ----
D="$W/data-delta"
mkdir -p "$D/workspace" "$D/home" "$D/state"
printf 'x\n' >"$D/workspace/f"
chown -R 201000:201000 "$D"
mapfile -d '' -t agent < <("${K8S[@]}" podman deploy/overlays/pod Pod agent "${MAP[@]}" --seccomp-root "$SECCOMP_ROOT" \
        --apparmor no --volume "data=$D" --userns-base 200000 --command none)
without() { # NAME COMMAND...: run COMMAND in the agent's container with txbox's entry for NAME removed
        local name=$1
        shift
        mkdir -p "$W/prof"
        $PY scripts/seccomp-profile.py --without "$name" --arch "$ARCH" >"$W/prof/without-$name.json"
        podman run --rm --network=none "${LIM[@]}" "${agent[@]/#seccomp=*/seccomp=$W/prof/without-$name.json}" "$@" 2>&1
}
mcp_run='printf "%s\n" "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"sh\",\"version\":\"1\"}}}" "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}" "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"echo MCP-RAN-\$((6*7))\"}}}" | txbox -C /data/workspace mcp'
out=$(podman run --rm --network=none "${LIM[@]}" "${agent[@]}" sh -c "$mcp_run" 2>&1)
like "$out" "MCP-RAN-42" "seccomp: with the whole profile, txbox mcp runs a command in its shared namespaces"
for name in clone unshare mount fsopen fsconfig fsmount move_mount mount_setattr; do
        out=$(without "$name" txbox -C /data/workspace run -- true); rc=$?
        check "seccomp: without $name, txbox run fails (status $rc)" test "$rc" -eq 125
done
out=$(without setns sh -c "$mcp_run")
like "$out" "MCP-RAN-42" "seccomp: without setns, txbox mcp still runs a command (its sandboxes make namespaces of their own)"
out=$(without sethostname txbox -C /data/workspace run -- cat /proc/sys/kernel/hostname); rc=$?
check "seccomp: without sethostname, the sandbox runs but keeps the pod's hostname (status $rc: '$out')" \
        test "$rc" -eq 0 -a "$out" != txbox

# ---- podman's defaults: /proc masked; the runtime's default seccomp profile ----
plain=("${LIM[@]}" --network=none --user 1000:1000 -v "$D:/data" --uidmap 0:200000:65536 --gidmap 0:200000:65536
       --env HOME=/data/home --env XDG_STATE_HOME=/data/state)
out=$(podman run --rm "${plain[@]}" "$IMAGE" txbox -C /data/workspace doctor 2>&1); rc=$?
check "podman's default settings: doctor exits 1" test "$rc" -eq 1
like "$out" "MISSING +own /proc +mount of proc failed" "podman's default settings: doctor says the sandbox's /proc cannot be mounted"
like "$out" "procMount: Unmasked" "podman's default settings: doctor names procMount: Unmasked"
$PY scripts/seccomp-profile.py --default --arch "$ARCH" >"$W/prof/default.json"
out=$(podman run --rm --network=none "${LIM[@]}" "${agent[@]/#seccomp=*/seccomp=$W/prof/default.json}" \
        txbox -C /data/workspace doctor 2>&1); rc=$?
check "containerd's default seccomp profile: doctor exits 1" test "$rc" -eq 1
like "$out" "MISSING +user namespaces +unshare or its uid map failed: Operation not permitted" \
        "containerd's default seccomp profile: doctor says the user namespace is refused"
like "$out" "deploy/seccomp/" "containerd's default seccomp profile: the hint names deploy/seccomp/"

podman image rm -f "$IMAGE" >/dev/null 2>&1
finish
