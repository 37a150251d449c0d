#!/usr/bin/env bash
# cmake/git_revision.cmake records a commit only for a source tree that is the top level of its own git
# repository; a tree unpacked inside another repository records `unknown`, and a .git_revision stamp wins.
# Usage: git_revision.sh [CMAKE] [SOURCE_ROOT]   (defaults: cmake on PATH, this repository)
set -euo pipefail
cmake=${1:-cmake}
source_root=${2:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
script=$source_root/cmake/git_revision.cmake

command -v git >/dev/null 2>&1 || { echo "git_revision: git is not installed; this test needs it" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

# A source tree of the script and one file, enough for the script to run on.
make_source() {
  mkdir -p "$1/cmake"
  cp "$script" "$1/cmake/git_revision.cmake"
  echo "int main() { return 0; }" >"$1/main.cpp"
}

new_repository() {
  git -C "$1" init -q
  git -C "$1" -c user.name=test -c user.email=test@invalid add -A
  git -C "$1" -c user.name=test -c user.email=test@invalid commit -q -m "test commit"
}

recorded_revision() {
  "$cmake" -DSOURCE_DIR="$1" -DOUTPUT="$tmp/out.cpp" -P "$script"
  sed -n 's/.*git_revision = "\(.*\)";/\1/p' "$tmp/out.cpp"
  rm -f "$tmp/out.cpp"
}

expect() {  # WHAT EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "ok: $1: $3"
  else
    echo "FAIL: $1: recorded '$3', expected '$2'" >&2
    failures=$((failures + 1))
  fi
}

# An unpacked archive (no .git of its own) inside another repository's work tree, as untracked files.
mkdir -p "$tmp/outer"
echo outer >"$tmp/outer/README"
new_repository "$tmp/outer"
make_source "$tmp/outer/unpacked"
expect "source inside another repository" unknown "$(recorded_revision "$tmp/outer/unpacked")"

# The same, committed into the outer repository: still not the top level of its own repository.
new_repository "$tmp/outer"
expect "source committed inside another repository" unknown "$(recorded_revision "$tmp/outer/unpacked")"

# A repository of its own: its commit, through a symbolic link too.
make_source "$tmp/own"
new_repository "$tmp/own"
own_commit=$(git -C "$tmp/own" describe --always --dirty --abbrev=12)
expect "source at the top level of its repository" "$own_commit" "$(recorded_revision "$tmp/own")"
ln -s "$tmp/own" "$tmp/link"
expect "the same through a symbolic link" "$own_commit" "$(recorded_revision "$tmp/link")"

# Outside any repository.
make_source "$tmp/plain"
expect "source outside any repository" unknown "$(GIT_CEILING_DIRECTORIES="$tmp" recorded_revision "$tmp/plain")"

# A stamp wins wherever the tree lies.
echo "v0.1.0-stamped" >"$tmp/outer/unpacked/.git_revision"
expect ".git_revision stamp" v0.1.0-stamped "$(recorded_revision "$tmp/outer/unpacked")"

if [ "$failures" -ne 0 ]; then
  echo "git_revision: $failures case(s) recorded the wrong revision" >&2
  exit 1
fi
