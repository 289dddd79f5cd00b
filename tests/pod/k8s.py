#!/usr/bin/python3
"""tests/pod/k8s.py: deploy/'s manifests, checked and turned into podman runs (make check-pod).

    k8s.py render DIR                  the kustomization in DIR, rendered (YAML on stdout)
    k8s.py validate DIR|FILE...        strict validation of each object (see below); exit 1 on errors
    k8s.py expect-invalid FILE GV      exit 0 when FILE's object is refused under group/version GV
    k8s.py podman DIR KIND CONTAINER [--image-map M=L] [--volume NAME=HOSTDIR] [--userns-base N]
                  [--seccomp-root DIR] [--apparmor yes|no] [--set-env NAME=VALUE]
                                       podman run options for that container of that object, NUL-separated
    k8s.py probe DIR KIND CONTAINER PROBE    the probe's exec command, NUL-separated
    k8s.py get DIR KIND PATH           a value of the rendered object, as JSON

Rendering: the part of kustomize deploy/ uses (resources: files and directories; components;
patches: JSON 6902 operations add, replace, remove and test; images with a target by kind and name).
Anything else in a kustomization is an error, not ignored.  tests/pod/run.sh compares the
result with `kubectl kustomize` where kubectl is installed.

Validation, unknown fields rejected everywhere (as the API server's strict field validation
does): built-in kinds against Kubernetes' own definitions of 1.33 and 1.36
(upstream/k8s-*.json), agent-sandbox's kinds against the CRDs of v0.5.0 and v0.5.6
(upstream/agent-sandbox-*) under every version each CRD serves, their metadata against
Kubernetes' ObjectMeta.  Every schema keyword the validator does not know is an error too.

The podman translation handles each field deploy/'s pods use and refuses any other, so a
field added to a manifest without a podman equivalent (or a note here why there is none)
fails the test instead of being dropped.
"""
import copy
import json
import os
import re
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
UP = os.path.join(HERE, "upstream")
K8S_VERSIONS = ("1.33", "1.36")
AS_VERSIONS = ("v0.5.0", "v0.5.6")


class Invalid(Exception):
    pass


def die(msg):
    sys.exit("k8s.py: " + msg)


# ---------------------------------------------------------------- rendering (kustomize subset)

def load_docs(path):
    try:
        with open(path) as f:
            return [d for d in yaml.safe_load_all(f) if d is not None]
    except (OSError, yaml.YAMLError) as e:
        die("%s: %s" % (path, e))


def unescape(tok):
    return tok.replace("~1", "/").replace("~0", "~")


def json6902(obj, ops, where):
    for op in ops:
        if set(op) - {"op", "path", "value"} or op.get("op") not in ("add", "replace", "remove", "test"):
            die("%s: unsupported patch operation %r" % (where, op))
        parts = [unescape(p) for p in op["path"].split("/")[1:]]
        parent = obj
        for p in parts[:-1]:
            if isinstance(parent, list):
                parent = parent[int(p)]
            elif isinstance(parent, dict) and p in parent:
                parent = parent[p]
            else:
                die("%s: %s: no %r" % (where, op["path"], p))
        last = parts[-1]
        if op["op"] == "test":
            have = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if have != op["value"]:
                die("%s: test %s: %r, not %r" % (where, op["path"], have, op["value"]))
            continue
        if isinstance(parent, list):
            i = len(parent) if last == "-" else int(last)
            if op["op"] == "add":
                parent.insert(i, copy.deepcopy(op["value"]))
            elif op["op"] == "replace":
                parent[i] = copy.deepcopy(op["value"])
            else:
                del parent[i]
        else:
            if op["op"] in ("replace", "remove") and last not in parent:
                die("%s: %s: nothing to %s" % (where, op["path"], op["op"]))
            if op["op"] == "remove":
                del parent[last]
            else:
                parent[last] = copy.deepcopy(op["value"])


def matches(obj, target):
    for k, v in target.items():
        if k == "kind" and obj.get("kind") != v:
            return False
        if k == "name" and obj.get("metadata", {}).get("name") != v:
            return False
        if k not in ("kind", "name"):
            die("unsupported patch target key %r" % k)
    return True


def render(d, want_kind=("Kustomization",)):
    path = os.path.join(d, "kustomization.yaml")
    docs = load_docs(path)
    if len(docs) != 1:
        die("%s: one document expected" % path)
    k = docs[0]
    if k.get("kind") not in want_kind:
        die("%s: kind %s where %s was expected" % (path, k.get("kind"), "/".join(want_kind)))
    api = {"Kustomization": "kustomize.config.k8s.io/v1beta1", "Component": "kustomize.config.k8s.io/v1alpha1"}
    if k.get("apiVersion") != api[k["kind"]]:
        die("%s: apiVersion %s" % (path, k.get("apiVersion")))
    unknown = set(k) - {"apiVersion", "kind", "resources", "components", "patches", "images"}
    if unknown:
        die("%s: unsupported keys %s" % (path, sorted(unknown)))
    objs = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(d, r))
        if os.path.isdir(p):
            objs += render(p)
        else:
            objs += load_docs(p)
    for c in k.get("components", []):
        comp = os.path.normpath(os.path.join(d, c))
        cdoc = load_docs(os.path.join(comp, "kustomization.yaml"))[0]
        if cdoc.get("kind") != "Component":
            die("%s: not a Component" % comp)
        objs += render_resources_only(comp, cdoc)
        apply_patches(objs, cdoc, comp)
    apply_patches(objs, k, d)
    for img in k.get("images", []):
        set_image(objs, img, path)
    return objs


def set_image(node, img, where):
    """kustomize's images: every containers[].image and initContainers[].image of that name."""
    if set(img) - {"name", "newName", "newTag"}:
        die("%s: images: only name, newName and newTag are supported" % where)
    if isinstance(node, list):
        for v in node:
            set_image(v, img, where)
    elif isinstance(node, dict):
        for key, v in node.items():
            if key in ("containers", "initContainers") and isinstance(v, list):
                for c in v:
                    if isinstance(c, dict) and isinstance(c.get("image"), str):
                        m = re.fullmatch(r"([^@]+?)(?::([^:/@]+))?(@.*)?", c["image"])
                        if m and m.group(1) == img["name"]:
                            c["image"] = img.get("newName", m.group(1)) + (
                                ":" + img["newTag"] if "newTag" in img else (":" + m.group(2) if m.group(2) else ""))
            set_image(v, img, where)


def render_resources_only(d, k):
    unknown = set(k) - {"apiVersion", "kind", "resources", "patches"}
    if unknown:
        die("%s: unsupported keys %s" % (d, sorted(unknown)))
    objs = []
    for r in k.get("resources", []):
        p = os.path.normpath(os.path.join(d, r))
        objs += render(p) if os.path.isdir(p) else load_docs(p)
    return objs


def apply_patches(objs, k, d):
    for i, p in enumerate(k.get("patches", [])):
        if set(p) != {"target", "patch"}:
            die("%s: patch %d: only target and an inline JSON 6902 patch are supported" % (d, i))
        ops = yaml.safe_load(p["patch"])
        if not isinstance(ops, list):
            die("%s: patch %d is not a list of operations" % (d, i))
        for o in objs:
            if matches(o, p["target"]):
                json6902(o, ops, "%s: patch %d" % (d, i))


def objects(arg):
    if os.path.isdir(arg):
        return render(arg)
    return load_docs(arg)


# ---------------------------------------------------------------- validation

KNOWN_KEYWORDS = {
    "type", "properties", "required", "items", "additionalProperties", "enum", "anyOf", "$ref", "format",
    "pattern", "minimum", "maximum", "maxLength", "minLength", "maxItems", "minItems", "default", "nullable",
    "description", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-map-type",
    "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy", "x-kubernetes-group-version-kind",
    "x-kubernetes-unions", "x-kubernetes-embedded-resource", "uniqueItems",
}


class Validator:
    def __init__(self, defs=None):
        self.defs = defs or {}

    def check(self, value, schema, path, errs):
        unknown = set(schema) - KNOWN_KEYWORDS
        if unknown:
            raise Invalid("%s: the validator does not know the schema keywords %s" % (path, sorted(unknown)))
        if "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[1]
            if name not in self.defs:
                raise Invalid("%s: unknown definition %s" % (path, name))
            return self.check(value, self.defs[name], path, errs)
        if value is None:
            if schema.get("nullable"):
                return
            errs.append("%s: null" % path)
            return
        if schema.get("x-kubernetes-int-or-string") or schema.get("format") == "int-or-string":
            if not isinstance(value, (int, str)) or isinstance(value, bool):
                errs.append("%s: %r is neither an integer nor a string" % (path, value))
            elif isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
                errs.append("%s: %r does not match %s" % (path, value, schema["pattern"]))
            return
        if "anyOf" in schema and "type" not in schema:
            sub = []
            for alt in schema["anyOf"]:
                e = []
                self.check(value, alt, path, e)
                if not e:
                    break
                sub += e
            else:
                errs.append("%s: matches none of anyOf (%s)" % (path, "; ".join(sub)))
            return
        t = schema.get("type")
        if t == "object" or (t is None and ("properties" in schema or "additionalProperties" in schema)):
            if not isinstance(value, dict):
                errs.append("%s: expected an object, found %r" % (path, value))
                return
            props = schema.get("properties")
            addl = schema.get("additionalProperties")
            for req in schema.get("required", []):
                if req not in value:
                    errs.append("%s: %s is required" % (path, req))
            for key, v in value.items():
                if props is not None and key in props:
                    self.check(v, props[key], "%s.%s" % (path, key), errs)
                elif isinstance(addl, dict):
                    self.check(v, addl, "%s.%s" % (path, key), errs)
                elif props is None and addl is None:
                    pass  # a free-form object (type: object and nothing else)
                elif schema.get("x-kubernetes-preserve-unknown-fields"):
                    pass
                else:
                    errs.append("%s: unknown field %r" % (path, key))
        elif t == "array":
            if not isinstance(value, list):
                errs.append("%s: expected a list, found %r" % (path, value))
                return
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                errs.append("%s: more than %d items" % (path, schema["maxItems"]))
            if "minItems" in schema and len(value) < schema["minItems"]:
                errs.append("%s: fewer than %d items" % (path, schema["minItems"]))
            for i, v in enumerate(value):
                self.check(v, schema.get("items", {}), "%s[%d]" % (path, i), errs)
            if schema.get("x-kubernetes-list-type") == "map":
                keys = schema.get("x-kubernetes-list-map-keys", [])
                seen = set()
                for v in value:
                    if isinstance(v, dict):
                        kv = tuple(v.get(k) for k in keys)
                        if kv in seen:
                            errs.append("%s: duplicate entry %s" % (path, dict(zip(keys, kv))))
                        seen.add(kv)
            if schema.get("x-kubernetes-list-type") == "set":
                if len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
                    errs.append("%s: duplicate items in a set" % path)
        elif t == "string":
            if not isinstance(value, str):
                errs.append("%s: expected a string, found %r" % (path, value))
                return
            if "enum" in schema and value not in schema["enum"]:
                errs.append("%s: %r is not one of %s" % (path, value, schema["enum"]))
            if "pattern" in schema and not re.search(schema["pattern"], value):
                errs.append("%s: %r does not match %s" % (path, value, schema["pattern"]))
            if "maxLength" in schema and len(value) > schema["maxLength"]:
                errs.append("%s: longer than %d" % (path, schema["maxLength"]))
            if "minLength" in schema and len(value) < schema["minLength"]:
                errs.append("%s: shorter than %d" % (path, schema["minLength"]))
        elif t == "integer":
            if not isinstance(value, int) or isinstance(value, bool):
                errs.append("%s: expected an integer, found %r" % (path, value))
                return
            lim = {"int32": 2 ** 31, "int64": 2 ** 63}.get(schema.get("format"))
            if lim and not -lim <= value < lim:
                errs.append("%s: %d out of %s" % (path, value, schema["format"]))
            if "minimum" in schema and value < schema["minimum"]:
                errs.append("%s: %d is below %s" % (path, value, schema["minimum"]))
            if "maximum" in schema and value > schema["maximum"]:
                errs.append("%s: %d is above %s" % (path, value, schema["maximum"]))
            if "enum" in schema and value not in schema["enum"]:
                errs.append("%s: %r is not one of %s" % (path, value, schema["enum"]))
        elif t == "number":
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                errs.append("%s: expected a number, found %r" % (path, value))
        elif t == "boolean":
            if not isinstance(value, bool):
                errs.append("%s: expected true or false, found %r" % (path, value))
        elif t is None:
            pass
        else:
            raise Invalid("%s: the validator does not know the type %r" % (path, t))


def k8s_schemas():
    out = {}
    for v in K8S_VERSIONS:
        with open(os.path.join(UP, "k8s-%s.json" % v)) as f:
            defs = json.load(f)["definitions"]
        gvk = {}
        for name, d in defs.items():
            for g in d.get("x-kubernetes-group-version-kind", []):
                api = g["version"] if not g["group"] else "%s/%s" % (g["group"], g["version"])
                gvk[(api, g["kind"])] = name
        out[v] = (Validator(defs), gvk)
    return out


def crd_schemas():
    """{(agent-sandbox version, group/version, kind): (schema, served, storage)}"""
    out = {}
    for av in AS_VERSIONS:
        d = os.path.join(UP, "agent-sandbox-" + av)
        for f in sorted(os.listdir(d)):
            crd = load_docs(os.path.join(d, f))[0]
            g, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
            for ver in crd["spec"]["versions"]:
                out[(av, "%s/%s" % (g, ver["name"]), kind)] = (
                    ver["schema"]["openAPIV3Schema"], ver.get("served", False), ver.get("storage", False))
    return out


def validate_object(obj, k8s, crds, errs, where):
    api, kind = obj.get("apiVersion"), obj.get("kind")
    name = obj.get("metadata", {}).get("name") or obj.get("metadata", {}).get("generateName", "?")
    label = "%s %s %s" % (where, kind, name)
    found = False
    for v, (val, gvk) in k8s.items():
        if (api, kind) in gvk:
            found = True
            e = []
            val.check(obj, {"$ref": "#/definitions/" + gvk[(api, kind)]}, kind, e)
            errs += ["%s (Kubernetes %s): %s" % (label, v, x) for x in e]
    group = api.rsplit("/", 1)[0] if "/" in api else ""
    crd_versions = {(av, gv): s for (av, gv, k), s in crds.items() if k == kind and gv.startswith(group + "/")}
    if crd_versions:
        found = True
        meta_v = k8s[K8S_VERSIONS[-1]][0]
        for (av, gv), (schema, served, storage) in sorted(crd_versions.items()):
            if not served:
                continue
            # The same object under every version the CRD serves, except a version whose
            # shape differs (a SandboxClaim of v1beta1 has no v1alpha1 form: expect-invalid).
            if gv != api and kind == "SandboxClaim":
                continue
            o = dict(obj, apiVersion=gv)
            e = []
            Validator().check(o, schema, kind, e)
            meta_v.check(o.get("metadata", {}), {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"},
                         kind + ".metadata", e)
            errs += ["%s (agent-sandbox %s, %s): %s" % (label, av, gv, x) for x in e]
        for av in AS_VERSIONS:
            if not any(gv == api and s[1] for (a, gv), s in crd_versions.items() if a == av):
                errs.append("%s: %s is not served by agent-sandbox %s" % (label, api, av))
            # deploy/ uses the version the API server stores: a deprecated one is converted,
            # and a v1alpha1 claim so converted waits for a warm pool nobody creates.
            if not any(gv == api and s[2] for (a, gv), s in crd_versions.items() if a == av):
                errs.append("%s: %s is not the version agent-sandbox %s stores" % (label, api, av))
    if not found:
        errs.append("%s: no schema for %s %s" % (label, api, kind))


def cmd_validate(args):
    k8s, crds = k8s_schemas(), crd_schemas()
    errs, n = [], 0
    for a in args:
        for o in objects(a):
            validate_object(o, k8s, crds, errs, a)
            n += 1
    for e in errs:
        print(e)
    if not n:
        print("%s: no objects" % " ".join(args))
        return 1
    return 1 if errs else 0


def cmd_expect_invalid(args):
    path, gv = args
    k8s, crds = k8s_schemas(), crd_schemas()
    bad = 0
    for o in objects(path):
        o = dict(o, apiVersion=gv)
        for av in AS_VERSIONS:
            key = (av, gv, o["kind"])
            if key not in crds:
                print("%s %s: not defined in agent-sandbox %s" % (gv, o["kind"], av))
                continue
            e = []
            Validator().check(o, crds[key][0], o["kind"], e)
            if e:
                print("agent-sandbox %s refuses it as %s: %s" % (av, gv, "; ".join(e)))
            else:
                print("agent-sandbox %s accepts it as %s" % (av, gv))
                bad = 1
    return bad


# ---------------------------------------------------------------- podman translation

def find(objs, kind):
    found = [o for o in objs if o.get("kind") == kind]
    if len(found) != 1:
        die("%d objects of kind %s" % (len(found), kind))
    return found[0]


def pod_spec(obj):
    """The pod spec a kubelet would run for this object, and the volumes its controller adds."""
    kind = obj["kind"]
    if kind == "Pod":
        return copy.deepcopy(obj["spec"])
    if kind == "DaemonSet":
        return copy.deepcopy(obj["spec"]["template"]["spec"])
    if kind == "SandboxTemplate":
        # What agent-sandbox's controllers do to the template's pod spec (at 2fd412d):
        # automountServiceAccountToken defaults to false, the DNS is replaced only when the
        # template gives no networkPolicy, and each volumeClaimTemplate becomes a volume of
        # the same name backed by the sandbox's PVC (extensions/controllers/utils.go,
        # controllers/sandbox_controller.go).
        spec = copy.deepcopy(obj["spec"]["podTemplate"]["spec"])
        spec.setdefault("automountServiceAccountToken", False)
        if obj["spec"].get("networkPolicyManagement", "Managed") == "Managed" and "networkPolicy" not in obj["spec"]:
            die("SandboxTemplate: the controller's default policy would replace the DNS: not translated")
        vols = [v for v in spec.get("volumes", []) if v["name"] not in
                {t["metadata"]["name"] for t in obj["spec"].get("volumeClaimTemplates", [])}]
        for t in obj["spec"].get("volumeClaimTemplates", []):
            vols.append({"name": t["metadata"]["name"], "persistentVolumeClaim": {"claimName": "(per sandbox)"}})
        spec["volumes"] = vols
        return spec
    die("no pod spec in a %s" % kind)


def quantity_bytes(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti)?", str(q))
    if not m:
        die("memory quantity %r" % q)
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[m.group(2)]


def cpus(q):
    q = str(q)
    return str(int(q[:-1]) / 1000) if q.endswith("m") else q


def podman_args(spec, cname, opts):
    """podman run options, then the image, then the command's arguments."""
    POD_FIELDS = {"hostUsers", "automountServiceAccountToken", "enableServiceLinks", "nodeSelector", "securityContext",
                  "initContainers", "containers", "volumes", "hostPID", "terminationGracePeriodSeconds"}
    unknown = set(spec) - POD_FIELDS
    if unknown:
        die("pod fields without a podman translation: %s" % sorted(unknown))
    args = []
    if spec.get("hostUsers", True) is False:
        base = int(opts.get("userns-base", 200000))
        args += ["--uidmap", "0:%d:65536" % base, "--gidmap", "0:%d:65536" % base]
    if spec.get("automountServiceAccountToken", True) is not False:
        die("a service account token would be mounted")
    if spec.get("hostPID"):
        args += ["--pid=host"]
    # nodeSelector: scheduling, nothing to run.  enableServiceLinks: podman injects no
    # service variables either.
    grace = spec.get("terminationGracePeriodSeconds", 30)
    args += ["--stop-timeout", str(grace)]
    conts = [c for c in spec.get("initContainers", []) + spec.get("containers", []) if c["name"] == cname]
    if len(conts) != 1:
        die("no container %s" % cname)
    c = conts[0]
    CFIELDS = {"name", "image", "imagePullPolicy", "command", "args", "env", "workingDir", "securityContext",
               "volumeMounts", "resources", "restartPolicy", "startupProbe", "readinessProbe"}
    unknown = set(c) - CFIELDS
    if unknown:
        die("container fields without a podman translation: %s" % sorted(unknown))
    psc, csc = spec.get("securityContext", {}), c.get("securityContext", {})
    PSC = {"runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup", "fsGroupChangePolicy", "seccompProfile",
           "appArmorProfile"}
    CSC = {"allowPrivilegeEscalation", "readOnlyRootFilesystem", "capabilities", "procMount", "runAsUser",
           "runAsGroup", "runAsNonRoot", "privileged", "seccompProfile"}
    if set(psc) - PSC or set(csc) - CSC:
        die("securityContext fields without a podman translation: %s" % sorted((set(psc) - PSC) | (set(csc) - CSC)))
    uid = csc.get("runAsUser", psc.get("runAsUser"))
    gid = csc.get("runAsGroup", psc.get("runAsGroup", uid))
    if uid is not None:
        args += ["--user", "%d:%d" % (uid, gid)]
    if csc.get("runAsNonRoot", psc.get("runAsNonRoot")) and not uid:
        die("runAsNonRoot without a non-root runAsUser")
    if "fsGroup" in psc:
        args += ["--group-add", str(psc["fsGroup"])]
    # fsGroupChangePolicy: the kubelet's chown of the volume; the test makes the volume's
    # owner the pod's mapped user itself.
    sec = csc.get("seccompProfile", psc.get("seccompProfile", {"type": "RuntimeDefault"}))
    if sec["type"] == "Localhost":
        root = opts.get("seccomp-root")
        if not root:
            die("a Localhost seccomp profile needs --seccomp-root")
        f = os.path.join(root, sec["localhostProfile"])
        if not os.path.isfile(f):
            die("no seccomp profile %s" % f)
        args += ["--security-opt", "seccomp=" + f]
    elif sec["type"] != "RuntimeDefault":
        die("seccomp type %s" % sec["type"])
    aa = psc.get("appArmorProfile")
    if aa:
        if aa["type"] != "Localhost":
            die("AppArmor type %s" % aa["type"])
        if opts.get("apparmor") != "yes":
            die("the pod needs the AppArmor profile %s and this host cannot load it" % aa["localhostProfile"])
        args += ["--security-opt", "apparmor=" + aa["localhostProfile"]]
    if csc.get("privileged"):
        args += ["--privileged"]
    if csc.get("allowPrivilegeEscalation") is False:
        args += ["--security-opt", "no-new-privileges"]
    if csc.get("readOnlyRootFilesystem"):
        # Kubernetes mounts nothing writable the manifest does not name: no tmpfs of podman's own.
        args += ["--read-only", "--read-only-tmpfs=false"]
    caps = csc.get("capabilities", {})
    if set(caps) - {"drop"} or (caps and caps.get("drop") != ["ALL"]):
        die("capabilities other than drop: [ALL]")
    if caps:
        args += ["--cap-drop=ALL"]
    pm = csc.get("procMount", "Default")
    if pm == "Unmasked":
        args += ["--security-opt", "unmask=ALL"]
    elif pm != "Default":
        die("procMount %s" % pm)
    env = {}
    for e in c.get("env", []):
        if set(e) != {"name", "value"}:
            die("env %r: only name and value" % e)
        env[e["name"]] = e["value"]
    for kv in opts.get("set-env", []):
        k, v = kv.split("=", 1)
        if k not in env:
            die("--set-env %s: the manifest does not set %s" % (kv, k))
        env[k] = v
    for k, v in env.items():
        args += ["--env", "%s=%s" % (k, v)]
    if "workingDir" in c:
        args += ["--workdir", c["workingDir"]]
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    hostdirs = dict(kv.split("=", 1) for kv in opts.get("volume", []))
    for m in c.get("volumeMounts", []):
        if set(m) - {"name", "mountPath"}:
            die("volumeMount %r" % m)
        v = vols[m["name"]]
        if "persistentVolumeClaim" in v or "hostPath" in v:
            if m["name"] not in hostdirs:
                die("volume %s needs --volume %s=HOSTDIR" % (m["name"], m["name"]))
            args += ["-v", "%s:%s" % (hostdirs[m["name"]], m["mountPath"])]
        elif "emptyDir" in v:
            ed = v["emptyDir"]
            if ed.get("medium") != "Memory" or set(ed) - {"medium", "sizeLimit"}:
                die("emptyDir %r" % ed)
            args += ["--tmpfs", "%s:rw,size=%d,mode=1777" % (m["mountPath"], quantity_bytes(ed["sizeLimit"]))]
        else:
            die("volume %r" % v)
    res = c.get("resources", {})
    if set(res) - {"requests", "limits"} or set(res.get("limits", {})) - {"cpu", "memory"}:
        die("resources %r" % res)
    lim = res.get("limits", {})
    if "memory" in lim:
        args += ["--memory", str(quantity_bytes(lim["memory"]))]
    if "cpu" in lim:
        args += ["--cpus", cpus(lim["cpu"])]
    # requests: scheduling only.  restartPolicy: Always (a native sidecar): tests/pod/run.sh
    # runs it beside the agent for the pod's life.  Probes: `k8s.py probe`.
    image = c["image"]
    imap = dict(kv.split("=", 1) for kv in opts.get("image-map", []))
    if image not in imap:
        die("image %s not mapped (--image-map)" % image)
    args += ["--pull=never"]
    cmd = c.get("command")
    tail = []
    if opts.get("command") == "none":
        # The container's settings without its command: the caller gives one after the image.
        return args + [imap[image]]
    if cmd:
        args += ["--entrypoint", cmd[0]]
        tail = cmd[1:]
    tail += c.get("args", [])
    return args + [imap[image]] + tail


def cmd_selftest(root):
    """The validator refuses what the API server would: each case must produce an error."""
    k8s, crds = k8s_schemas(), crd_schemas()
    pod = find(render(os.path.join(root, "overlays/pod")), "Pod")
    tmpl = find(render(os.path.join(root, "overlays/agent-sandbox")), "SandboxTemplate")
    pool = find(render(os.path.join(root, "overlays/agent-sandbox")), "SandboxWarmPool")
    claim = load_docs(os.path.join(root, "claims/claim.yaml"))[0]

    def mut(obj, fn):
        o = copy.deepcopy(obj)
        fn(o)
        return o
    cases = [
        ("an unknown pod field", mut(pod, lambda o: o["spec"].update(hostUserz=False))),
        ("an unknown container securityContext field", mut(pod, lambda o: o["spec"]["containers"][0]
                                                             ["securityContext"].update(procMounts="Unmasked"))),
        ("a string where an integer belongs", mut(pod, lambda o: o["spec"]["securityContext"].update(runAsUser="1000"))),
        ("a container without its required name", mut(pod, lambda o: o["spec"]["containers"][0].pop("name"))),
        ("two containers of one name", mut(pod, lambda o: o["spec"]["containers"].append(
            copy.deepcopy(o["spec"]["containers"][0])))),
        ("an unknown metadata field", mut(pod, lambda o: o["metadata"].update(label={"a": "b"}))),
        ("an unknown field in the template's pod spec", mut(tmpl, lambda o: o["spec"]["podTemplate"]["spec"]
                                                            .update(hostUserz=False))),
        ("an unknown template field", mut(tmpl, lambda o: o["spec"].update(sandboxTemplateRef={"name": "x"}))),
        ("an unknown network policy value", mut(tmpl, lambda o: o["spec"].update(networkPolicyManagement="Off"))),
        ("a pool without its template", mut(pool, lambda o: o["spec"].pop("sandboxTemplateRef"))),
        ("a claim without warmPoolRef (v1beta1)", mut(claim, lambda o: o["spec"].pop("warmPoolRef"))),
        ("a v1beta1 claim with v1alpha1's sandboxTemplateRef", mut(claim, lambda o: o["spec"].update(
            sandboxTemplateRef={"name": "txbox-agent"}))),
        ("a claim of the deprecated v1alpha1", mut(claim, lambda o: (o.update(
            apiVersion="extensions.agents.x-k8s.io/v1alpha1"), o["spec"].pop("warmPoolRef"),
            o["spec"].update(sandboxTemplateRef={"name": "txbox-agent"})))),
    ]
    bad = 0
    for what, o in cases:
        errs = []
        validate_object(o, k8s, crds, errs, "selftest")
        if errs:
            print("ok: %s is refused: %s" % (what, errs[0]))
        else:
            print("NOT REFUSED: %s" % what)
            bad = 1
    return bad


def parse_opts(rest):
    opts = {}
    it = iter(rest)
    for a in it:
        if not a.startswith("--"):
            die("unexpected %s" % a)
        k = a[2:]
        v = next(it)
        if k in ("image-map", "volume", "set-env"):
            opts.setdefault(k, []).append(v)
        else:
            opts[k] = v
    return opts


def main(argv):
    if not argv:
        die(__doc__)
    cmd, args = argv[0], argv[1:]
    try:
        if cmd == "render":
            yaml.safe_dump_all(render(args[0]), sys.stdout, sort_keys=False)
            return 0
        if cmd == "validate":
            return cmd_validate(args)
        if cmd == "selftest":
            return cmd_selftest(args[0])
        if cmd == "expect-invalid":
            return cmd_expect_invalid(args)
        if cmd == "podman":
            spec = pod_spec(find(objects(args[0]), args[1]))
            out = podman_args(spec, args[2], parse_opts(args[3:]))
            sys.stdout.write("\0".join(out) + "\0")
            return 0
        if cmd == "probe":
            spec = pod_spec(find(objects(args[0]), args[1]))
            c = [c for c in spec.get("initContainers", []) + spec["containers"] if c["name"] == args[2]][0]
            p = c[args[3]]
            if set(p) - {"exec", "periodSeconds", "timeoutSeconds", "failureThreshold"}:
                die("probe %r" % p)
            sys.stdout.write("\0".join(p["exec"]["command"]) + "\0")
            return 0
        if cmd == "get":
            v = find(objects(args[0]), args[1])
            for part in args[2].split("."):
                v = v[int(part)] if isinstance(v, list) else v[part]
            print(json.dumps(v))
            return 0
    except Invalid as e:
        die(str(e))
    die("unknown command %s" % cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
