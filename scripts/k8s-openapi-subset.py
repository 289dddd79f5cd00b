#!/usr/bin/python3
"""Cut Kubernetes' OpenAPI (swagger.json) down to the kinds deploy/ uses, as pinned test data.

    scripts/k8s-openapi-subset.py SWAGGER_JSON --version 1.36 --source TEXT > tests/pod/upstream/k8s-1.36.json

Keeps the definitions reachable from the kinds below (with everything they reference), drops
the descriptions, and records where the file came from.  Nothing else is changed: the
validator in tests/pod/k8s.py reads the definitions as Kubernetes publishes them.
"""
import argparse
import json
import sys

ROOTS = [
    "io.k8s.api.core.v1.Pod",
    "io.k8s.api.core.v1.PersistentVolumeClaim",
    "io.k8s.api.core.v1.Namespace",
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.apps.v1.DaemonSet",
    "io.k8s.api.networking.v1.NetworkPolicy",
    "io.k8s.api.rbac.v1.Role",
    "io.k8s.api.rbac.v1.RoleBinding",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
]


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k != "description"}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


def refs(node, out):
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str):
            out.add(r.rsplit("/", 1)[1])
        for v in node.values():
            refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("swagger")
    ap.add_argument("--version", required=True)
    ap.add_argument("--source", required=True, help="where the swagger.json came from (URL, commit, blob)")
    a = ap.parse_args()
    with open(a.swagger) as f:
        defs = json.load(f)["definitions"]
    keep, todo = {}, list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        if name not in defs:
            sys.exit("k8s-openapi-subset: %s is not in %s" % (name, a.swagger))
        keep[name] = strip(defs[name])
        found = set()
        refs(keep[name], found)
        todo.extend(sorted(found - set(keep)))
    out = {
        "source": a.source,
        "kubernetes": a.version,
        "license": "Apache-2.0 (Copyright The Kubernetes Authors)",
        "extracted_by": "scripts/k8s-openapi-subset.py (the definitions reachable from its ROOTS, without descriptions)",
        "roots": ROOTS,
        "definitions": dict(sorted(keep.items())),
    }
    json.dump(out, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
