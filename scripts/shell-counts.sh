#!/bin/sh
# The counts issue 24 asks for, at a commit (default HEAD): files calling libevent, stored Bool
# properties in Proxy/, and the largest Proxy/ files. Read-only; prints a small report.
rev=${1:-HEAD}
files() { git ls-tree -r --name-only "$rev" "$1" | grep '\.swift$'; }
echo "commit $(git rev-parse --short "$rev")"
libevent=0
for f in $(files Sources/Countersign); do
  git show "$rev:$f" | grep -qE '\b(event|evbuffer|bufferevent|evconnlistener|evdns|evutil)_[a-z_]+\(' && libevent=$((libevent + 1))
done
echo "files calling libevent: $libevent"
bools=0
for f in $(files Sources/Countersign/Proxy); do
  n=$(git show "$rev:$f" | grep -cE '^( {4}| {8})((public|private|fileprivate|internal|private\(set\)|weak|lazy|final) )*(var|let) [a-zA-Z_]+(: Bool( = (true|false))?| = (true|false))\s*(//.*)?$')
  bools=$((bools + n))
done
echo "stored Bool properties in Proxy/: $bools"
echo "largest Proxy/ files (lines):"
for f in $(files Sources/Countersign/Proxy); do echo "$(git show "$rev:$f" | wc -l) $f"; done | sort -rn | head -5
