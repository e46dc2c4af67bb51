#!/usr/bin/env python3
"""check_links.py must fail on every kind of dead reference it claims to
find, and only on those: each case plants one reference in a scratch copy of
the repository's documents and sources and compares the exit status and the
lines printed.

usage: test_check_links.py CHECK_LINKS_PY SOURCE_DIR"""
import os
import shutil
import subprocess
import sys
import tempfile


def copy_tree(src, dst):
    def ignore(d, names):
        top = os.path.samefile(d, src)
        return [n for n in names if n in ('.git', '.venv', '__pycache__') or
                (top and (n == 'build' or n.startswith('build-') or n == 'results'))]
    shutil.copytree(src, dst, ignore=ignore, symlinks=True)


def P(*parts):
    """A path joined here, so that this file itself names no dead path."""
    return '/'.join(parts)


def run(script, root):
    p = subprocess.run([sys.executable, script, root], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, [l for l in p.stdout.splitlines() if l]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    script, src = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, 'repo')
        copy_tree(src, root)
        # A build tree and demo output inside the copy must be ignored.
        os.makedirs(os.path.join(root, 'build', 'x'))
        with open(os.path.join(root, 'build', 'x', 'dead.md'), 'w') as f:
            f.write('[gone](no-such-file.md)\n')

        rc, out = run(script, root)
        if rc != 0:
            print('the unmodified copy does not pass:', *out, sep='\n  ')
            return 1

        # (file, text appended, expected dead: a string the one line must
        # contain, or None when the text must pass)
        cases = [
            ('docs/architecture.md', '\nSee [gone](no-such-file.md).\n', 'no-such-file.md'),
            ('docs/architecture.md', '\n![img](../no-such-dir/x.png)\n', '../no-such-dir/x.png'),
            ('docs/architecture.md', '\n[out](../../outside.md)\n', 'outside the repository'),
            ('docs/architecture.md', '\n[ref]: missing/target.md\n', 'missing/target.md'),
            ('docs/architecture.md', '\n[anchor](locks.md#no-such-anchor-needed)\n', None),
            ('README.md', '\nThe algorithm is in `lib/prims/no_such.c`.\n', 'lib/prims/no_such.c'),
            ('README.md', f'\nSee `{P("docs", "no-such.md")}:12`.\n', P('docs', 'no-such.md')),
            ('README.md', '\nSee `lib/no-such-dir/`.\n', 'lib/no-such-dir/'),
            ('docs/locks.md', f'\nThe design: `{P("..", "..", "elsewhere", "design.md")}`.\n',
             'outside the repository'),
            ('lib/prims/lock.c', f'\n/* measured: {P("docs", "results", "no-such.md")} */\n',
             P('docs', 'results', 'no-such.md')),
            ('bench/exp_locks.c', f'\n/* see {P("bench", "NO-SUCH.md")}. */\n', P('bench', 'NO-SUCH.md')),
            ('tests/CMakeLists.txt', f'\n# {P("docs", "nothing-here.md")}\n', P('docs', 'nothing-here.md')),
            # what the rule leaves alone
            ('README.md', '\n[web](https://example.com/no/such/page.md) `build/hwsync` '
             '`results/demo-1/report.html` `/dev/no-such` `~/.cache/hwsync/x.txt` '
             '`$HWSYNC_CACHE_DIR/adaptive-x.txt` `include/hwsync/lock_<kind>.h` '
             '`bench/exp_*.c` `hwsync/lock_mcs.h` `lib/cmake/hwsync/x.cmake` '
             '`shim/native` `no-such.h`\n', None),
            ('README.md', f'\n```sh\ncat {P("docs", "no-such.md")} `lib/no_such.c`\n[x](gone.md)\n```\n',
             None),
            ('lib/prims/lock.c', '\n/* "%s/../tools/no-such/report.py" */\n', None),
        ]
        for rel, text, want in cases:
            path = os.path.join(root, rel)
            with open(path) as f:
                orig = f.read()
            with open(path, 'a') as f:
                f.write(text)
            rc, out = run(script, root)
            with open(path, 'w') as f:
                f.write(orig)
            what = f'{rel} + {text.strip()!r}'
            if want is None:
                if rc != 0:
                    failures.append(f'{what}: failed, should pass: {out}')
            elif rc != 1 or len(out) != 1 or want not in out[0] or not out[0].startswith(rel + ':'):
                failures.append(f'{what}: rc {rc}, lines {out}; expected one line about {want!r}')
    for f in failures:
        print('FAIL:', f)
    if failures:
        return 1
    print(f'check_links: {len(cases)} cases as expected')
    return 0


if __name__ == '__main__':
    sys.exit(main())
