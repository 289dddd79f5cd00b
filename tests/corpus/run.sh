#!/bin/bash
# Optional corpus suite: the policy engine over public corpora of risky and benign shell
# commands (../shared/corpus, see its README.md).  Prints TAP plus a summary table; skips
# cleanly when the corpora (or python3 with PyYAML) are absent.
#
#   BUILD=build tests/corpus/run.sh           (after make)
#   TXBOX_CORPUS=/path/to/corpus tests/corpus/run.sh
#
# Nothing here executes a corpus command: tests/corpus/driver.c only calls
# policy_check_shell() on each string.  Corpus files are read in place, never copied.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
top=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
CORPUS=${TXBOX_CORPUS:-$top/../shared/corpus}
# A git worktree of the project lives elsewhere: the corpora sit beside its main checkout.
if [ -z "${TXBOX_CORPUS:-}" ] && [ ! -d "$CORPUS" ]; then
        common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
                CORPUS=$(dirname "$(dirname "$common")")/shared/corpus
fi

skip() { echo "1..0 # SKIP $*"; exit 0; }
[ -d "$CORPUS/dcg-corpus" ] || skip "corpus not found at $CORPUS"
python3 -c 'import yaml, tomllib' 2>/dev/null || skip "python3 with PyYAML and tomllib (3.11+) needed"
[ -f "$BUILD/libtxbox-int.a" ] || skip "$BUILD/libtxbox-int.a missing; run make first"

work=$(mktemp -d "${TMPDIR:-/tmp}/txbox-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A sanitizer build of the library (make SANITIZE=1) needs the sanitizers' runtime too.
san=""
nm "$BUILD/libtxbox-int.a" 2>/dev/null | grep -q __asan_ && san="-fsanitize=address,undefined"
# shellcheck disable=SC2046,SC2086
cc -O2 $san -Iinclude -Isrc/lib -o "$work/driver" tests/corpus/driver.c "$BUILD/libtxbox-int.a" \
        $(pkg-config --libs libseccomp sqlite3 jansson libfyaml zlib libcurl) || { echo "Bail out! driver build failed"; exit 1; }

CORPUS="$CORPUS" WORK="$work" python3 - <<'PY' || exit 1
import glob, json, os, re, subprocess, yaml, tomllib
C, W = os.environ["CORPUS"], os.environ["WORK"]

def run(cases):
    """Decide every case with the C driver (parse + match only)."""
    inp = "".join(json.dumps(c) + "\n" for c in cases)
    out = subprocess.run([W + "/driver"], input=inp, capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines()]

# --- dcg: the peer's labelled suite (tests/corpus/**/*.toml) ---
dcg = []
for f in sorted(glob.glob(C + "/dcg-corpus/tests/corpus/**/*.toml", recursive=True)):
    for c in tomllib.load(open(f, "rb"))["case"]:
        if "command" in c:
            dcg.append({"file": os.path.relpath(f, C), "command": c["command"],
                        "expected": c.get("expected", c.get("expected_decision"))})
# Where our policy deliberately differs from dcg's labels (README: "re-label where our
# policy differs"); each with the reason.
RELABEL = {
    "python -c \"import shutil; shutil.rmtree('/tmp/demo')\"": ("allow", "/tmp is scratch space; dcg itself allows rm -rf /tmp/build"),
    "python -c 'import shutil; shutil.rmtree(\"/tmp/demo\")'": ("allow", "same, other quoting"),
    "rm -rf ./build": ("allow", "the issue requires rm -rf build/ to stay allowed"),
    "echo yes | rm -rf && echo done": ("allow", "rm with no operand deletes nothing"),
    "kubectl delete namespace prod": ("deny", "the issue requires cluster destruction to be refused"),
    "kubectl delete all --all": ("deny", "same"),
    "docker system prune": ("deny", "issue 22 requires container wipes (docker system prune) to be refused"),
    "docker system prune -a": ("deny", "same"),
}
res = run(dcg)
def agree(rows, relabel):
    d = [r for r in rows if (relabel.get(r["command"], (r["expected"],))[0] if relabel else r["expected"]) == "deny"]
    a = [r for r in rows if (relabel.get(r["command"], (r["expected"],))[0] if relabel else r["expected"]) == "allow"]
    dc = sum(r["decision"] != "allow" for r in d)
    ar = sum(r["decision"] != "allow" for r in a)
    return dc, len(d), ar, len(a), [r for r in d if r["decision"] == "allow"], [r for r in a if r["decision"] != "allow"]
raw = agree(res, None)
rel = agree(res, RELABEL)

# --- nl2bash: benign one-liners ---
nl = [{"command": l.rstrip("\n")} for l in open(C + "/nl2bash/all.cm", encoding="utf-8", errors="replace")]
nres = run(nl)
# Lines refused for a destructive reason by our rules are excluded; what remains refused
# (unknowns, parse errors, shell hand-offs) counts as false positives.
NONDESTRUCTIVE = {"unknown-command", "unknown-path", "parse-error", "limit-exceeded", "interactive-shell", "shell-escape"}
nref = [r for r in nres if r["decision"] != "allow"]
ndestr = [r for r in nref if r["rule"] not in NONDESTRUCTIVE]
nfp = [r for r in nref if r["rule"] in NONDESTRUCTIVE]
nbenign = len(nres) - len(ndestr)

# --- GTFOBins ---
g = []
for f in sorted(glob.glob(C + "/gtfobins/_gtfobins/*")):
    d = next(yaml.safe_load_all(open(f)), None) or {}
    for fn, es in (d.get("functions") or {}).items():
        for e in es:
            if isinstance(e, dict) and "code" in e:
                g.append({"binary": os.path.basename(f), "function": fn, "command": e["code"]})
gres = run(g)
WANT = {"shell", "reverse-shell", "bind-shell", "command", "file-write", "upload", "privilege-escalation", "library-load"}
gw = [r for r in gres if r["function"] in WANT]
gcaught = sum(r["decision"] != "allow" for r in gw)

# --- RedCode-Exec ---
rc = []
for f in sorted(glob.glob(C + "/redcode-exec/bash2text_dataset_json/*.json")):
    for x in json.load(open(f)):
        rc.append({"id": x["Index"], "command": x["Code"]})
rres = run(rc)
OS = {1, 2, 3, 4, 6, 7, 8, 9, 18, 21}
by = {}
for r in rres:
    s = int(r["id"].split("_")[0])
    t = by.setdefault(s, [0, 0]); t[0] += 1; t[1] += r["decision"] != "allow"
os_n = sum(by[s][0] for s in OS if s in by); os_c = sum(by[s][1] for s in OS if s in by)
py = []
for f in sorted(glob.glob(C + "/redcode-exec/py2text_dataset_json/*.json")):
    for x in json.load(open(f)):
        py.append({"id": x["Index"], "command": "python3 - <<'EOF'\n" + x["Code"] + "\nEOF"})
pres = run(py)
pc = sum(r["decision"] != "allow" for r in pres)

# --- our own labelled benign set: everyday development commands (tests/corpus/benign.txt) ---
ben = [{"command": l.rstrip("\n")} for l in open("tests/corpus/benign.txt", encoding="utf-8")
       if l.strip() and not l.startswith("#")]
bres = run(ben)
bref = [r for r in bres if r["decision"] != "allow"]

pct = lambda a, b: 100.0 * a / b if b else 0.0
n = 0
def tap(cond, msg):
    global n; n += 1
    print(("ok" if cond else "not ok"), n, "-", msg)
tap(pct(rel[0], rel[1]) >= 99, "dcg deny cases refused: %d/%d (%.1f%%; %.1f%% on dcg's raw labels) target >= 99%%" % (rel[0], rel[1], pct(rel[0], rel[1]), pct(raw[0], raw[1])))
tap(pct(rel[2], rel[3]) <= 5, "dcg allow cases refused: %d/%d (%.1f%%; %.1f%% on raw labels) target <= 5%%" % (rel[2], rel[3], pct(rel[2], rel[3]), pct(raw[2], raw[3])))
tap(pct(len(nfp), nbenign) <= 2, "nl2bash benign lines refused: %d/%d (%.2f%%) target <= 2%%" % (len(nfp), nbenign, pct(len(nfp), nbenign)))
tap(pct(len(bref), len(bres)) <= 2, "everyday development commands refused: %d/%d (%.2f%%) target <= 2%%" % (len(bref), len(bres), pct(len(bref), len(bres))))
for r in bref: print("# benign refused:", r["rule"], repr(r["command"][:100]))
print("# dcg relabelled:", "; ".join("%r -> %s (%s)" % (k, v[0], v[1]) for k, v in RELABEL.items()))
for r in rel[4]: print("# dcg deny missed:", repr(r["command"][:100]))
for r in rel[5]: print("# dcg allow refused:", r["rule"], repr(r["command"][:100]))
print("# nl2bash: %d lines, %d refused in all (%.1f%%), %d of them for destructive rules (excluded)" % (len(nres), len(nref), pct(len(nref), len(nres)), len(ndestr)))
print("# GTFOBins: %d/%d escape snippets caught (%.1f%%) in %s; all functions %d/%d" % (gcaught, len(gw), pct(gcaught, len(gw)), ",".join(sorted(WANT)), sum(r["decision"] != "allow" for r in gres), len(gres)))
print("# RedCode bash OS-level scenarios %s: %d/%d caught (%.1f%%)" % (sorted(OS), os_c, os_n, pct(os_c, os_n)))
print("# RedCode bash per scenario: " + ", ".join("%d:%d/%d" % (s, by[s][1], by[s][0]) for s in sorted(by)))
print("# RedCode python (as python3 - <<EOF): %d/%d caught" % (pc, len(pres)))
print("1..%d" % n)
PY
