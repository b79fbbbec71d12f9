#!/usr/bin/env python3
"""Checks that no #include in src/ runs from a lower layer up to a higher one.

The layers, lowest first, are docs/design.md's "Layers"; a folder may include its own files,
those of any lower layer and the public headers (include/polyinfer/). One provider's folder
never includes another's: what providers share lives in src/ops/ or src/runtime/.

    tools/check_layers.py            # prints each offending include; exit status 1 if any
"""
import pathlib
import re
import sys

# Lowest first. Folders on one line share a layer and may not include each other.
LAYERS = [
    ["core"],
    ["ir", "hw"],
    ["onnx"],
    ["runtime"],
    ["ops"],
    ["infer"],
    ["providers"],
    ["opt"],
    ["quant"],
    ["plan"],
    ["api"],
    ["serve"],
    ["cli"],
]
RANK = {name: i for i, names in enumerate(LAYERS) for name in names}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def provider_of(parts):
    """The provider folder a path under src/providers/ belongs to ("cpu", "vulkan", ...)."""
    return parts[1] if len(parts) > 1 and parts[0] == "providers" else None


def main():
    src = pathlib.Path(__file__).resolve().parent.parent / "src"
    bad = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp", ".cu", ".cuh"):
            continue
        parts = path.relative_to(src).parts
        layer = parts[0]
        if layer not in RANK:
            bad.append(f"{path.relative_to(src.parent)}: folder src/{layer} has no layer in "
                       "tools/check_layers.py (add it to LAYERS and to docs/design.md)")
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == "polyinfer":
                continue
            target = m.group(1)
            where = f"{path.relative_to(src.parent)}:{number}: includes {target}/{m.group(2)}"
            if target not in RANK:
                continue  # a system or generated header that happens to look like ours
            if target == layer:
                mine, theirs = provider_of(parts), provider_of((target,) + tuple(
                    m.group(2).split("/")))
                if mine and theirs and mine != theirs:
                    bad.append(f"{where}: one provider includes another's (share it through "
                               "src/ops/ or src/runtime/)")
                continue
            if RANK[target] >= RANK[layer]:
                bad.append(f"{where}: {target} is not below {layer} (docs/design.md, Layers)")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
