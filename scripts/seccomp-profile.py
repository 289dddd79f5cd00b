#!/usr/bin/python3
"""Write txbox's Localhost seccomp profiles: containerd's default plus txbox's delta.

    scripts/seccomp-profile.py            write deploy/seccomp/<arch>/txbox.json for amd64 and arm64
    scripts/seccomp-profile.py --check    exit 1 (naming the file) when a committed profile differs
    scripts/seccomp-profile.py --without NAME --arch ARCH
                                          print ARCH's profile without txbox's NAME entry
                                          (tests/pod/run.sh: what fails without it)
    scripts/seccomp-profile.py --default --arch ARCH
                                          print containerd's default alone, as txbox.json would be
                                          without txbox's entries

Inputs: deploy/seccomp/containerd-default.json (containerd's RuntimeDefault for a container
without capabilities, pinned and extracted by scripts/seccomp-containerd-default.py) and
deploy/seccomp/txbox-delta.json (txbox's additions, each with its reason).  Each addition
becomes one SCMP_ACT_ALLOW entry after the default's, with a "comment" (containerd ignores
the key; podman and CRI-O read it as the entry's comment).
"""
import argparse
import json
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SECCOMP = os.path.join(ROOT, "deploy", "seccomp")


def load(name):
    with open(os.path.join(SECCOMP, name)) as f:
        return json.load(f)


def profile(arch, without=None, default_only=False):
    base = load("containerd-default.json")
    delta = load("txbox-delta.json")
    if arch not in base["profiles"]:
        sys.exit("seccomp-profile: no default for %s" % arch)
    p = json.loads(json.dumps(base["profiles"][arch]))
    if default_only:
        return p
    known = set()
    for d in delta["syscalls"]:
        if set(d) != {"names", "why"} or not d["names"] or not d["why"].strip():
            sys.exit("seccomp-profile: a delta entry needs exactly names and why: %r" % d)
        known.update(d["names"])
        names = [n for n in d["names"] if n != without]
        if names:
            p["syscalls"].append({"names": names, "action": "SCMP_ACT_ALLOW", "comment": "txbox: " + d["why"]})
    if without is not None and without not in known:
        sys.exit("seccomp-profile: %s is not one of txbox's additions" % without)
    return p


def render(p):
    return json.dumps(p, indent=2) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--without")
    ap.add_argument("--default", action="store_true")
    ap.add_argument("--arch")
    a = ap.parse_args()
    arches = sorted(load("containerd-default.json")["profiles"])
    if a.without or a.default:
        if not a.arch:
            sys.exit("seccomp-profile: --without and --default need --arch")
        sys.stdout.write(render(profile(a.arch, a.without, a.default)))
        return 0
    bad = 0
    for arch in arches:
        path = os.path.join(SECCOMP, arch, "txbox.json")
        want = render(profile(arch))
        if a.check:
            try:
                with open(path) as f:
                    have = f.read()
            except OSError as e:
                have = None
                print("seccomp-profile: %s: %s" % (path, e.strerror), file=sys.stderr)
            if have != want:
                print("seccomp-profile: deploy/seccomp/%s/txbox.json is not what scripts/seccomp-profile.py "
                      "writes: run it" % arch, file=sys.stderr)
                bad = 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".tmp", "w") as f:
                f.write(want)
            os.replace(path + ".tmp", path)
    return bad


if __name__ == "__main__":
    sys.exit(main())
