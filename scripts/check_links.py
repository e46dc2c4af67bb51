#!/usr/bin/env python3
"""Fail on links and repository paths that point at nothing.

usage: check_links.py [ROOT]      (ROOT: the repository, default: this script's ..)

Prints one line per dead reference, FILE:LINE: what, and exits 1; prints one
summary line and exits 0 when every reference resolves.

What is checked
  Markdown files (*.md):
    * links and images, [text](target) and ![alt](target), and reference
      definitions, [id]: target.  The target is resolved against the file's
      directory (a leading / against ROOT) after dropping #fragment and
      ?query; it must exist and must stay inside ROOT.
    * inline code spans that are a repository path: one token whose first
      component is a directory at the top of ROOT (docs/, lib/, shim/, ...)
      and that names a file (its last component has an extension:
      lib/prims/clh.c, docs/locks.md) or a directory (it ends with /:
      lib/prims/).  A trailing :LINE or :LINE:COL is dropped.  The path must
      exist.  A span that starts with ./ or ../ is resolved against the
      file's directory and must also stay inside ROOT.
  Other text files (C and C++ sources and headers, Python, shell, CMake,
  Makefiles, *.in, *.map):
    * every path that starts with docs/, and every path ending in .md whose
      first component is a directory at the top of ROOT (bench/README.md).
      These are the references to documents that comments and help texts make.

What is not checked (the rule)
  * text inside fenced code blocks (``` or ~~~): commands and program output,
    which name files of the machine they ran on;
  * URLs and other targets with a scheme (https:, mailto:), and #anchors
    alone;
  * paths that are not in the source tree by design: the build trees
    (build/, build-*/), the outputs of make demo (results/), the virtual
    environment (.venv/), absolute paths (/dev/..., /sys/...), paths from
    the home directory or a variable (~/..., $HOME/...), and installed
    locations (anything under lib/cmake/, lib/pkgconfig/, share/, bin/,
    libexec/, include/ files reached through an include path such as
    hwsync/lock_mcs.h, which does not start with a top-level directory);
  * patterns: a token with any of * ? [ ] { } < > stands for many files
    (bench/exp_*.c, include/hwsync/lock_<kind>.h) and is skipped;
  * bare file names without a directory (wait.h), and tokens without an
    extension or a trailing / (lib/arch, shim/native, tests/kmod/kmwait_vmtest),
    which cannot be told from units, names of built programs or words.
"""
import os
import re
import sys

SKIP_DIRS = {'.git', '.venv', '__pycache__', 'node_modules'}
SKIP_TOP = {'results'}              # make demo's output, not sources
INSTALLED = ('lib/cmake/', 'lib/pkgconfig/', 'share/', 'bin/', 'libexec/')
PATTERN_CHARS = set('*?[]{}<>')
CODE_EXT = ('.c', '.h', '.cpp', '.hpp', '.py', '.sh', '.cmake', '.in', '.map')
CODE_NAMES = ('CMakeLists.txt', 'Makefile', 'Kbuild')

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')
CODESPAN = re.compile(r'(`+)(.+?)\1')
FENCE = re.compile(r'^\s{0,3}(```|~~~)')
SCHEME = re.compile(r'^[A-Za-z][A-Za-z0-9+.-]*:')
CODE_DOC = re.compile(r'(?<![\w./$~-])((?:[\w.-]+/)*[\w.-]+)')


def build_dir(name):
    return name == 'build' or name.startswith('build-')


def walk(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not
                         (rel == '.' and (build_dir(x) or x in SKIP_TOP)))
        for f in sorted(files):
            yield os.path.join(d, f)


class Checker:
    def __init__(self, root):
        self.root = os.path.realpath(root)
        self.top_dirs = {e for e in os.listdir(self.root)
                         if os.path.isdir(os.path.join(self.root, e))
                         and e not in SKIP_DIRS and not build_dir(e) and e not in SKIP_TOP}
        self.top_files = {e for e in os.listdir(self.root)
                          if os.path.isfile(os.path.join(self.root, e))}
        self.dead = []
        self.checked = 0

    def report(self, path, line, msg):
        self.dead.append(f'{os.path.relpath(path, self.root)}:{line}: {msg}')

    def exists(self, rel):
        return os.path.exists(os.path.join(self.root, rel))

    def inside(self, p):
        return p == self.root or p.startswith(self.root + os.sep)

    def check_link(self, path, line, target):
        if target.startswith('#') or SCHEME.match(target):
            return
        target = target.split('#', 1)[0].split('?', 1)[0]
        if not target:
            return
        self.checked += 1
        base = self.root if target.startswith('/') else os.path.dirname(path)
        resolved = os.path.realpath(os.path.join(base, target.lstrip('/')))
        if not self.inside(resolved):
            self.report(path, line, f"link '{target}' points outside the repository")
        elif not os.path.exists(resolved):
            self.report(path, line, f"link '{target}' points to a file that does not exist")

    def repo_path(self, path, token):
        """The token of a code span in PATH as an absolute path to check, or
        None when the rule skips it."""
        token = re.sub(r':\d+(:\d+)?$', '', token.strip())
        if not token or any(c.isspace() for c in token) or PATTERN_CHARS & set(token):
            return None
        if token.startswith(('/', '~', '$')) or SCHEME.match(token):
            return None
        last = token.rstrip('/').rsplit('/', 1)[-1]
        if not (token.endswith('/') or '.' in last.lstrip('.')):
            return None
        if token.startswith(('./', '../')):
            return os.path.realpath(os.path.join(os.path.dirname(path), token))
        if token.startswith(INSTALLED):
            return None
        if '/' not in token or token.split('/', 1)[0] not in self.top_dirs:
            return None
        return os.path.join(self.root, token)

    def check_span(self, path, line, token):
        p = self.repo_path(path, token)
        if p is None:
            return
        self.checked += 1
        if not self.inside(p):
            self.report(path, line, f"`{token}` is outside the repository")
        elif not os.path.exists(p):
            self.report(path, line, f"`{token}` does not exist in the repository")

    def check_markdown(self, path):
        fenced = None
        with open(path, encoding='utf-8', errors='replace') as f:
            for n, text in enumerate(f, 1):
                m = FENCE.match(text)
                if m:
                    if fenced is None:
                        fenced = m.group(1)
                    elif fenced == m.group(1):
                        fenced = None
                    continue
                if fenced:
                    continue
                for m in LINK.finditer(text):
                    self.check_link(path, n, m.group(1))
                m = REFDEF.match(text)
                if m:
                    self.check_link(path, n, m.group(1))
                for m in CODESPAN.finditer(text):
                    self.check_span(path, n, m.group(2))

    def check_code(self, path):
        with open(path, encoding='utf-8', errors='replace') as f:
            for n, text in enumerate(f, 1):
                for m in CODE_DOC.finditer(text):
                    tok = m.group(1).rstrip('.')
                    if '/' not in tok:
                        continue
                    first = tok.split('/', 1)[0]
                    if first not in self.top_dirs:
                        continue
                    if not (first == 'docs' or tok.endswith('.md')):
                        continue
                    self.checked += 1
                    if not self.exists(tok):
                        self.report(path, n, f"'{tok}' does not exist in the repository")

    def run(self):
        for path in walk(self.root):
            name = os.path.basename(path)
            if name.endswith('.md'):
                self.check_markdown(path)
            elif name.endswith(CODE_EXT) or name in CODE_NAMES:
                self.check_code(path)
        return self.dead


def main(argv):
    if len(argv) == 2 and argv[1] in ('-h', '--help'):
        print(__doc__.strip())
        return 0
    if len(argv) > 2:
        print(__doc__.strip().split('\n\n')[1], file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), '..')
    if not os.path.isdir(root):
        print(f'check_links: {root}: not a directory', file=sys.stderr)
        return 2
    c = Checker(root)
    dead = c.run()
    for d in dead:
        print(d)
    if dead:
        print(f'check_links: {len(dead)} dead of {c.checked} links and paths', file=sys.stderr)
        return 1
    print(f'check_links: {c.checked} links and paths, all present')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
