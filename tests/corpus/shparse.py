# Helper of tests/corpus/shparse.sh (which builds the driver and sets MODE, CORPUS, WORK):
# every string read by bash --pretty-print and by the parser's driver, compared.
import glob, json, os, subprocess, sys

MODE, C, W = os.environ["MODE"], os.environ["CORPUS"], os.environ["WORK"]
BASH_ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}


def bash_print(cmd):
    """bash's reading of cmd as a function body: ("ok", print) or ("syntax", "")."""
    f = os.path.join(W, "case.sh")
    with open(f, "wb") as o:
        o.write(b"f () {\n" + cmd.encode("utf-8", "surrogateescape") + b"\n}\n")
    p = subprocess.run(["bash", "--pretty-print", f], capture_output=True, env=BASH_ENV, cwd=W, timeout=20)
    if p.returncode != 0 or p.stderr:
        return "syntax", ""
    return "ok", p.stdout.decode("utf-8", "surrogateescape").rstrip("\n")


def ours(cmds):
    """The driver's reading of every string: [(status, print)]."""
    inp = b"".join(c.encode("utf-8", "surrogateescape") + b"\0" for c in cmds)
    out = subprocess.run([W + "/shprint"], input=inp, capture_output=True, check=True, timeout=600).stdout
    res = []
    for rec in out.split(b"\0")[:-1]:
        st, _, pr = rec.decode("utf-8", "surrogateescape").partition("\n")
        res.append((st, pr.rstrip("\n")))
    if len(res) != len(cmds):
        sys.exit("Bail out! the driver printed %d records for %d strings" % (len(res), len(cmds)))
    return res


def compare(cmd, mine):
    """None when both readings agree, else what differs."""
    bst, bpr = bash_print(cmd)
    st, pr = mine
    if bst == "syntax":
        return None if st != "ok" else "bash: syntax error; parser: read it"
    if st != "ok":
        return "bash read it; parser: %s error" % st
    if pr != bpr:
        return "prints differ:\n# bash:\n%s\n# parser:\n%s" % (bpr, pr)
    return None


def note(s):
    return "\n".join("#   " + l for l in s.splitlines())


def cases():
    """tests/corpus/shparse.txt: strings separated by lines of `#%%`; one test each."""
    text = open("tests/corpus/shparse.txt", encoding="utf-8").read()
    cmds, cur = [], []
    for line in text.split("\n"):
        if line == "#%%":
            if cur:
                cmds.append("\n".join(cur).strip("\n"))
            cur = []
        elif not (not cur and line.startswith("# ")):
            cur.append(line)
    if cur and "\n".join(cur).strip():
        cmds.append("\n".join(cur).strip("\n"))
    n = 0
    for cmd, mine in zip(cmds, ours(cmds)):
        n += 1
        why = compare(cmd, mine)
        print("%sok %d - %s" % ("not " if why else "", n, cmd.splitlines()[0][:70]))
        if why:
            print(note("input:\n" + cmd + "\n" + why))
    print("1..%d" % n)


def load_corpora():
    import tomllib, yaml
    sets = {}
    sets["nl2bash"] = [l.rstrip("\n") for l in open(C + "/nl2bash/all.cm", encoding="utf-8", errors="replace")]
    sets["dcg"] = [c["command"] for f in sorted(glob.glob(C + "/dcg-corpus/tests/corpus/**/*.toml", recursive=True))
                   for c in tomllib.load(open(f, "rb"))["case"] if "command" in c]
    g = []
    for f in sorted(glob.glob(C + "/gtfobins/_gtfobins/*")):
        d = next(yaml.safe_load_all(open(f)), None) or {}
        for es in (d.get("functions") or {}).values():
            g += [e["code"] for e in es if isinstance(e, dict) and "code" in e]
    sets["gtfobins"] = g
    sets["redcode-bash"] = [x["Code"] for f in sorted(glob.glob(C + "/redcode-exec/bash2text_dataset_json/*.json"))
                            for x in json.load(open(f))]
    return sets


def corpus():
    """Agreement per corpus; a failure only when the parser reads as a program what bash
    calls a syntax error in more than 1 % of a corpus's strings (the other direction fails
    closed: the policy refuses what it cannot read)."""
    n = 0
    for name, cmds in load_corpora().items():
        cmds = [c for c in dict.fromkeys(cmds) if "\0" not in c and c.strip()]
        agree, loose, strict, differ, shown = 0, 0, 0, 0, 0
        for cmd, mine in zip(cmds, ours(cmds)):
            why = compare(cmd, mine)
            if why is None:
                agree += 1
                continue
            loose += why.startswith("bash: syntax")
            strict += why.startswith("bash read it")
            differ += why.startswith("prints differ")
            if shown < int(os.environ.get("SHPARSE_VERBOSE") or 0):
                shown += 1
                print(note("%s: %s\n%s" % (name, cmd, why)))
        n += 1
        pct = 100.0 * agree / max(len(cmds), 1)
        ok = loose * 100 <= len(cmds)
        print("%sok %d - %s: %d/%d strings read as bash reads them (%.1f%%); parser read %d that bash "
              "refuses, refused %d that bash reads; %d print differently"
              % ("" if ok else "not ", n, name, agree, len(cmds), pct, loose, strict, differ))
    print("1..%d" % n)


cases() if MODE == "cases" else corpus()
