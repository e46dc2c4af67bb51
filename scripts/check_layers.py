#!/usr/bin/env python3
"""Check that no code includes a header of a higher layer.

    check_layers.py [ROOT]

The layers, their folders and the layer of every public header are listed in
cmake/layers.txt.  The build gives each layer an include root holding only
its own and lower layers' folders, so a private include that reaches up
already fails to compile; the public headers all sit in include/hwsync/,
which every layer sees, so only this check stops an upward public include.
It reads every #include of every file in a layer folder and in
include/hwsync/, and prints one line per violation:

    FILE:LINE: includes WHAT (layer L), above LAYER

Exit status 0 when there is none, 1 when there is at least one, 2 when
cmake/layers.txt or the tree is not what it expects.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
SOURCE_EXT = ('.c', '.h', '.cpp', '.hpp')


def read_layers(root):
    layers = {}     # name -> (folder, set of layers it may include)
    public = {}     # header file name in include/hwsync/ -> layer
    path = os.path.join(root, 'cmake', 'layers.txt')
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = line.split('#', 1)[0].split()
            if not words:
                continue
            if words[0] == 'layer' and len(words) >= 3:
                name, folder, lower = words[1], words[2], words[3:]
                for l in lower:
                    if l not in layers:
                        raise ValueError(f'{path}:{n}: {name} lists {l}, not a layer above it in the file')
                layers[name] = (folder, set(lower) | {name})
            elif words[0] == 'public' and len(words) >= 3 and words[1] in layers:
                for h in words[2:]:
                    public[h] = words[1]
            else:
                raise ValueError(f'{path}:{n}: cannot read this line')
    return layers, public


def includes(path):
    with open(path, errors='replace') as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield n, m.group(1), m.group(2)


def check(root):
    layers, public = read_layers(root)
    problems = []
    folder_layer = {folder: name for name, (folder, _) in layers.items()}
    pub_dir = os.path.join('include', 'hwsync')

    # every public header has a layer, and every one listed exists
    present = sorted(os.listdir(os.path.join(root, pub_dir)))
    for h in present:
        if h not in public:
            problems.append(f'{pub_dir}/{h}:1: has no layer in cmake/layers.txt')
    for h in public:
        if h not in present:
            problems.append(f'cmake/layers.txt:1: lists {pub_dir}/{h}, which does not exist')
    # every folder under lib/ is a layer
    for d in sorted(os.listdir(os.path.join(root, 'lib'))):
        if os.path.isdir(os.path.join(root, 'lib', d)) and f'lib/{d}' not in folder_layer:
            problems.append(f'lib/{d}:1: is not a layer of cmake/layers.txt')

    files = []   # (relative path, layer, is public header)
    for h in present:
        if h in public:
            files.append((f'{pub_dir}/{h}', public[h], True))
    for name, (folder, _) in layers.items():
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            problems.append(f'cmake/layers.txt:1: the folder {folder} of layer {name} does not exist')
            continue
        for f in sorted(os.listdir(d)):
            if f.endswith(SOURCE_EXT):
                files.append((f'{folder}/{f}', name, False))

    for rel, layer, is_public in files:
        allowed = layers[layer][1]
        for n, kind, what in includes(os.path.join(root, rel)):
            where = f'{rel}:{n}: includes {kind}{what}{">" if kind == "<" else chr(34)}'
            top = what.split('/', 1)[0]
            if '..' in what.split('/'):
                problems.append(f'{where}, a path out of its folder (name a layer: "wait/internal.h")')
            elif top == 'hwsync' and what.count('/') == 1:
                target = public.get(what.split('/', 1)[1])
                if target is None:
                    problems.append(f'{where}, a public header with no layer')
                elif target not in allowed:
                    problems.append(f'{where} (layer {target}), above {layer}')
            elif top in layers and '/' in what:
                if is_public:
                    problems.append(f'{where}, a private header of {top}, from a public header')
                elif top not in allowed:
                    problems.append(f'{where} (layer {top}), above {layer}')
            elif kind == '"' and '/' not in what:
                if is_public or not os.path.exists(os.path.join(root, os.path.dirname(rel), what)):
                    problems.append(f'{where}, not a file of its own folder')
    return problems


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    try:
        problems = check(os.path.abspath(root))
    except (OSError, ValueError) as e:
        print(f'check_layers: {e}', file=sys.stderr)
        return 2
    for p in problems:
        print(p)
    if problems:
        print(f'check_layers: {len(problems)} include(s) against the layer order '
              '(cmake/layers.txt, docs/architecture.md)', file=sys.stderr)
        return 1
    print('check_layers: no include reaches up')
    return 0


if __name__ == '__main__':
    sys.exit(main())
