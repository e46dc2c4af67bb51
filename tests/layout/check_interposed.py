#!/usr/bin/env python3
"""Fail when the library calls a function the LD_PRELOAD shim interposes.

    check_interposed.py NM PRELOAD_MAP ARCHIVE

The shim links the library's own objects.  Were one of them to call, say,
pthread_mutex_lock, the call would reach the shim's interposer instead of
glibc, and a lock inside the library would recurse into the shim.  So the
library must call none of the names exported by the shim's version script
(their wildcards included); one line per call found.
"""
import fnmatch
import re
import subprocess
import sys


def exported(map_path):
    text = re.sub(r'/\*.*?\*/', '', open(map_path).read(), flags=re.S)
    glob = text.split('global:', 1)[1].split('local:', 1)[0]
    return [p.strip() for p in glob.split(';') if p.strip()]


def main():
    nm, map_path, archive = sys.argv[1:4]
    patterns = exported(map_path)
    if len(patterns) < 10:
        print(f'check_interposed: only {len(patterns)} names in {map_path}', file=sys.stderr)
        return 2
    out = subprocess.run([nm, '-u', '-A', archive], check=True, capture_output=True,
                         text=True).stdout
    bad = []
    for line in out.splitlines():
        # "archive:member.o:                 U name"
        parts = line.rsplit(None, 2)
        if len(parts) < 3 or parts[-2] != 'U':
            continue
        name = parts[-1].split('@', 1)[0]
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            bad.append(f'{parts[0].rstrip(":")}: calls {name}, which the shim interposes')
    for b in bad:
        print(b)
    if bad:
        return 1
    print(f'check_interposed: the library calls none of the {len(patterns)} interposed names')
    return 0


if __name__ == '__main__':
    sys.exit(main())
