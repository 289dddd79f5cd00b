#!/usr/bin/python3
"""Extract containerd's default seccomp profile from its Go source, as data.

    scripts/seccomp-containerd-default.py SECCOMP_DEFAULT_GO --tag v2.3.4 --commit SHA --blob SHA \
        > deploy/seccomp/containerd-default.json

containerd builds its RuntimeDefault profile in Go (contrib/seccomp/seccomp_default.go), per
architecture and per capability.  This script reads that file as text and evaluates the few
constructs it uses for one container: the architectures amd64 and arm64, a kernel of 4.8 or
later, and an empty capability bounding set (a container with `capabilities: drop: [ALL]`, as
txbox's pods are).  It knows exactly those constructs and stops with an error on anything else,
so a new construct upstream is noticed rather than skipped.  It runs nothing of containerd.

The output (deploy/seccomp/containerd-default.json) is the pinned input of
scripts/seccomp-profile.py; it records where it came from.
"""
import argparse
import json
import re
import sys

GOARCHES = ("amd64", "arm64")
KERNEL_AT_LEAST = (4, 8)

# The constants the file uses, from Linux's uapi headers (x/sys/unix takes them from there).
UNIX = {
    "AF_ALG": 38, "AF_VSOCK": 40, "ENOSYS": 38,
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
ARCH = {"ArchX86_64": "SCMP_ARCH_X86_64", "ArchX86": "SCMP_ARCH_X86", "ArchX32": "SCMP_ARCH_X32",
        "ArchARM": "SCMP_ARCH_ARM", "ArchAARCH64": "SCMP_ARCH_AARCH64"}
ACTION = {"ActAllow": "SCMP_ACT_ALLOW", "ActErrno": "SCMP_ACT_ERRNO"}
OP = {"OpEqualTo": "SCMP_CMP_EQ", "OpLessThan": "SCMP_CMP_LT", "OpGreaterThan": "SCMP_CMP_GT",
      "OpMaskedEqual": "SCMP_CMP_MASKED_EQ", "OpNotEqual": "SCMP_CMP_NE"}

TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"(?:[^"\\]|\\.)*"|0x[0-9a-fA-F]+|\d+|[A-Za-z_][A-Za-z0-9_]*'
                   r'|:=|!=|==|&&|\|\||[{}()\[\],:;.&|+!=<>*]', re.S)


def die(msg):
    sys.exit("seccomp-containerd-default: " + msg)


def tokenize(src):
    out, pos = [], 0
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m:
            die("cannot read the source at %r" % src[pos:pos + 40])
        t = m.group(0)
        pos = m.end()
        if not t.strip() or t.startswith("//") or t.startswith("/*"):
            continue
        out.append(t)
    return out


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self, want=None):
        t = self.peek()
        if want is not None and t != want:
            die("expected %r, found %r near %r" % (want, t, " ".join(self.t[self.i - 8:self.i + 8])))
        self.i += 1
        return t

    def expr(self):
        """An integer expression: a number, unix.NAME, and | or + of those."""
        v = self.term()
        while self.peek() in ("|", "+"):
            op = self.take()
            w = self.term()
            v = v | w if op == "|" else v + w
        return v

    def term(self):
        t = self.take()
        if t == "unix":
            self.take(".")
            name = self.take()
            if name not in UNIX:
                die("unknown constant unix.%s" % name)
            return UNIX[name]
        if re.fullmatch(r"0x[0-9a-fA-F]+|\d+", t):
            return int(t, 0)
        die("unexpected %r in an integer expression" % t)

    def qualified(self, pkg):
        self.take(pkg)
        self.take(".")
        return self.take()

    def syscall_literal(self):
        """specs.LinuxSyscall{Names: ..., Action: ..., Args: ..., ErrnoRet: ...} without the type."""
        self.take("{")
        entry = {}
        while self.peek() != "}":
            key = self.take()
            self.take(":")
            if key == "Names":
                for t in ("[", "]", "string", "{"):
                    self.take(t)
                names = []
                while self.peek() != "}":
                    names.append(json.loads(self.take()))
                    if self.peek() == ",":
                        self.take(",")
                self.take("}")
                entry["names"] = names
            elif key == "Action":
                a = self.qualified("specs")
                if a not in ACTION:
                    die("unknown action %s" % a)
                entry["action"] = ACTION[a]
            elif key == "Args":
                for t in ("[", "]", "specs", ".", "LinuxSeccompArg", "{"):
                    self.take(t)
                args = []
                while self.peek() != "}":
                    args.append(self.arg_literal())
                    if self.peek() == ",":
                        self.take(",")
                self.take("}")
                if args:
                    entry["args"] = args
            elif key == "ErrnoRet":
                self.take("&")
                if self.take() != "nosys":
                    die("ErrnoRet other than &nosys")
                entry["errnoRet"] = UNIX["ENOSYS"]
            else:
                die("unknown LinuxSyscall field %s" % key)
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        if "names" not in entry or "action" not in entry:
            die("a syscall entry without Names or Action")
        return entry

    def arg_literal(self):
        self.take("{")
        arg = {}
        while self.peek() != "}":
            key = self.take()
            self.take(":")
            if key == "Index":
                arg["index"] = self.expr()
            elif key == "Value":
                arg["value"] = self.expr()
            elif key == "ValueTwo":
                arg["valueTwo"] = self.expr()
            elif key == "Op":
                o = self.qualified("specs")
                if o not in OP:
                    die("unknown op %s" % o)
                arg["op"] = OP[o]
            else:
                die("unknown LinuxSeccompArg field %s" % key)
            if self.peek() == ",":
                self.take(",")
        self.take("}")
        return arg


def function_body(toks, name):
    for i in range(len(toks) - 1):
        if toks[i] == "func" and toks[i + 1] == name:
            j = toks.index("{", i)
            depth, k = 0, j
            while True:
                if toks[k] == "{":
                    depth += 1
                elif toks[k] == "}":
                    depth -= 1
                    if depth == 0:
                        return toks[j + 1:k]
                k += 1
    die("no func %s" % name)


def arches(toks, goarch):
    """func arches(): switch runtime.GOARCH { case "amd64": return []specs.Arch{...} ... }"""
    body = function_body(toks, "arches")
    i = 0
    while i < len(body):
        if body[i] == "case":
            j = body.index(":", i)
            labels = [json.loads(t) for t in body[i + 1:j] if t != ","]
            if goarch in labels:
                k = body.index("{", j)
                end = body.index("}", k)
                names = [t for t in body[k + 1:end] if t not in (",", "specs", ".")]
                if any(n not in ARCH for n in names):
                    die("unknown architecture in %s" % names)
                return [ARCH[n] for n in names]
            i = j
        i += 1
    die("no architectures for %s" % goarch)


def default_profile(toks, goarch):
    body = function_body(toks, "DefaultProfile")
    p = Parser(body)
    syscalls = []
    # A stack of frames, one per open brace: whether the code inside applies to this container.
    # Each frame: (kind, active, info)
    stack = []
    nosys_seen = False
    admin_seen = False

    def active():
        return all(f[1] for f in stack)

    while p.peek() is not None:
        t = p.peek()
        if t == "nosys":  # nosys := uint(unix.ENOSYS)
            for w in ("nosys", ":=", "uint", "(", "unix", ".", "ENOSYS", ")"):
                p.take(w)
            nosys_seen = True
        elif t == "admin" and p.peek(1) == ":=":  # admin := false
            for w in ("admin", ":=", "false"):
                p.take(w)
            admin_seen = True
        elif t == "admin" and p.peek(1) == "=":  # admin = true, in the CAP_SYS_ADMIN case
            for w in ("admin", "=", "true"):
                p.take(w)
            if active():
                die("CAP_SYS_ADMIN would be in the bounding set")
        elif t == "syscalls" and p.peek(1) == ":=":
            for w in ("syscalls", ":=", "[", "]", "specs", ".", "LinuxSyscall", "{"):
                p.take(w)
            while p.peek() != "}":
                syscalls.append(p.syscall_literal())
                if p.peek() == ",":
                    p.take(",")
            p.take("}")
        elif t == "s" and p.peek(1) == ":=":
            # s := &specs.LinuxSeccomp{DefaultAction: specs.ActErrno, Architectures: arches(), Syscalls: syscalls}
            for w in ("s", ":=", "&", "specs", ".", "LinuxSeccomp", "{", "DefaultAction", ":", "specs", ".",
                      "ActErrno", ",", "Architectures", ":", "arches", "(", ")", ",", "Syscalls", ":",
                      "syscalls", ",", "}"):
                p.take(w)
        elif t == "s" and p.peek(1) == ".":
            # s.Syscalls = append(s.Syscalls, specs.LinuxSyscall{...})
            for w in ("s", ".", "Syscalls", "=", "append", "(", "s", ".", "Syscalls", ",", "specs", ".",
                      "LinuxSyscall"):
                p.take(w)
            entry = p.syscall_literal()
            p.take(")")
            if active():
                syscalls.append(entry)
        elif t == "if":
            p.take("if")
            if p.peek() == "ok" and p.peek(1) == ",":
                # if ok, err := kernelversion.GreaterEqualThan(kernelversion.KernelVersion{Kernel: 4, Major: 8}); err == nil {
                for w in ("ok", ",", "err", ":=", "kernelversion", ".", "GreaterEqualThan", "(", "kernelversion",
                          ".", "KernelVersion", "{", "Kernel", ":"):
                    p.take(w)
                kern = int(p.take())
                p.take(",")
                p.take("Major")
                p.take(":")
                major = int(p.take())
                for w in ("}", ")", ";", "err", "==", "nil", "{"):
                    p.take(w)
                stack.append(("kernel", True, (kern, major) <= KERNEL_AT_LEAST))
            elif p.peek() == "ok":
                p.take("ok")
                p.take("{")
                kframe = [f for f in stack if f[0] == "kernel"]
                if not kframe:
                    die("'if ok' outside a kernel version check")
                stack.append(("if", kframe[-1][2], None))
            elif p.peek() == "!" and p.peek(1) == "admin":
                for w in ("!", "admin", "{"):
                    p.take(w)
                if not admin_seen:
                    die("'!admin' before 'admin := false'")
                stack.append(("if", True, None))  # no CAP_SYS_ADMIN in the bounding set
            else:
                die("unknown if statement near %r" % " ".join(body[p.i:p.i + 10]))
        elif t == "switch":
            p.take("switch")
            if p.peek() == "runtime":
                for w in ("runtime", ".", "GOARCH", "{"):
                    p.take(w)
                # Which case applies: find this switch's case labels first, for "default".
                depth, k, labels = 1, p.i, []
                while depth:
                    if body[k] == "{":
                        depth += 1
                    elif body[k] == "}":
                        depth -= 1
                    elif body[k] == "case" and depth == 1:
                        j = body.index(":", k)
                        labels += [json.loads(x) for x in body[k + 1:j] if x != ","]
                    k += 1
                stack.append(("switch-arch", True, {"labels": labels, "case": None}))
            elif p.peek() == "c":
                p.take("c")
                p.take("{")
                stack.append(("switch-cap", True, {"case": None}))
            else:
                die("unknown switch")
        elif t == "for":
            # for _, c := range sp.Process.Capabilities.Bounding {
            for w in ("for", "_", ",", "c", ":=", "range", "sp", ".", "Process", ".", "Capabilities", ".",
                      "Bounding", "{"):
                p.take(w)
            stack.append(("for-caps", True, None))
        elif t in ("case", "default"):
            p.take()
            labels = []
            while p.peek() != ":":
                x = p.take()
                if x != ",":
                    labels.append(json.loads(x))
            p.take(":")
            top = stack[-1]
            if top[0] == "switch-arch":
                on = (goarch in labels) if t == "case" else (goarch not in top[2]["labels"])
                stack[-1] = (top[0], on, top[2])
            elif top[0] == "switch-cap":
                # The bounding set is empty: no capability case applies.
                stack[-1] = (top[0], False, top[2])
            else:
                die("case outside a switch")
        elif t == "}":
            p.take("}")
            if not stack:
                die("unbalanced braces")
            stack.pop()
        elif t == "return":
            for w in ("return", "s"):
                p.take(w)
        else:
            die("unknown statement near %r" % " ".join(body[p.i:p.i + 10]))
    if stack:
        die("unbalanced braces at the end")
    if not nosys_seen:
        die("no nosys")
    return {"defaultAction": "SCMP_ACT_ERRNO", "architectures": arches(body_all, goarch), "syscalls": syscalls}


def main():
    global body_all
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--blob", required=True)
    a = ap.parse_args()
    with open(a.source) as f:
        body_all = tokenize(f.read())
    out = {
        "source": {
            "repository": "https://github.com/containerd/containerd",
            "path": "contrib/seccomp/seccomp_default.go",
            "tag": a.tag,
            "commit": a.commit,
            "blob": a.blob,
            "license": "Apache-2.0 (Copyright The containerd Authors)",
            "extracted_by": "scripts/seccomp-containerd-default.py",
            "evaluated_for": "GOARCH amd64 and arm64; a kernel of 4.8 or later; an empty capability bounding set "
                             "(capabilities: drop: [ALL]), hence no CAP_SYS_ADMIN",
        },
        "profiles": {g: default_profile(body_all, g) for g in GOARCHES},
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")


body_all = None
if __name__ == "__main__":
    main()
