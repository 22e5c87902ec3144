# SPDX-License-Identifier: MIT
"""The configuration keys the installed reference reads, from its own source.

Walks RNS/Reticulum.py (the [logging] and [reticulum] loops, _synthesize_interface)
and RNS/Interfaces/*.py (each class's reads of its configuration object) with the
ast module and prints one "scope<TAB>key" line per key, sorted:
  logging, reticulum     options of those sections (option == "key" in their loops)
  interface              options _synthesize_interface reads for every interface type
  <ClassName>            options that interface class reads ("TCPServerInterface", ...)
  <ClassName>.sub        options of its subsections (RNodeMultiInterface)
Keys that the loader itself writes into an interface's configuration before the class
reads it (name, storagepath, ...) are not user options and are left out.
Usage: ref_config_keys.py [RNS package folder]   (default: the importable RNS)
"""
import ast
import os
import sys

CFG_VARS = {"c": "", "subinterface_config": ".sub"}
GETTERS = {"as_bool", "as_int", "as_float", "as_list"}


def const_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def reads(tree):
    """(variable suffix, key) for every read of a config object in tree."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            k, var = const_str(node.left), node.comparators[0]
            if k and isinstance(var, ast.Name) and var.id in CFG_VARS:
                yield CFG_VARS[var.id], k
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            k = const_str(node.slice)
            if k and isinstance(node.value, ast.Name) and node.value.id in CFG_VARS:
                yield CFG_VARS[node.value.id], k
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            k, obj = const_str(node.args[0]), node.func.value
            if k and node.func.attr in GETTERS and isinstance(obj, ast.Name) and obj.id in CFG_VARS:
                yield CFG_VARS[obj.id], k


def loader_keys(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out, internal = set(), set()
    for node in ast.walk(tree):
        # for option in self.config["logging"] / ["reticulum"]: ... option == "key"
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Subscript):
            sec = const_str(node.iter.slice)
            if sec in ("logging", "reticulum") and isinstance(node.target, ast.Name):
                var = node.target.id
                for n in ast.walk(node):
                    if (isinstance(n, ast.Compare) and isinstance(n.left, ast.Name)
                            and n.left.id == var and len(n.ops) == 1
                            and isinstance(n.ops[0], ast.Eq)):
                        k = const_str(n.comparators[0])
                        if k:
                            out.add((sec, k))
        if isinstance(node, ast.FunctionDef) and node.name == "_synthesize_interface":
            for suffix, k in reads(node):
                out.add(("interface" + suffix, k))
            for n in ast.walk(node):
                if isinstance(n, ast.Assign):
                    for t in n.targets:
                        if (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name)
                                and t.value.id == "interface_config"):
                            k = const_str(t.slice)
                            if k:
                                internal.add(k)
    return out, internal


def class_keys(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    out = set()
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef):
            for suffix, k in reads(cls):
                out.add((cls.name + suffix, k))
    return out


def main():
    if len(sys.argv) > 1:
        root = sys.argv[1]
    else:
        import RNS
        root = os.path.dirname(RNS.__file__)
    keys, internal = loader_keys(os.path.join(root, "Reticulum.py"))
    idir = os.path.join(root, "Interfaces")
    for f in sorted(os.listdir(idir)):
        if f.endswith(".py") and f not in ("__init__.py", "Interface.py"):
            keys |= {(s, k) for s, k in class_keys(os.path.join(idir, f)) if k not in internal}
    if not any(s == "reticulum" for s, _ in keys) or not any(s == "interface" for s, _ in keys):
        sys.exit("ref_config_keys: found no [reticulum] or interface keys in " + root)
    for s, k in sorted(keys):
        print(f"{s}\t{k}")


main()
