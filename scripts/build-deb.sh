#!/usr/bin/env bash
# Builds .build/deb/countersign_VERSION_ARCH.deb from a countersign binary with dpkg-deb:
# the files come from `make install` into a staging root (one install recipe for both), plus
# the Debian control files in deploy/debian/. Depends is worked out from the libraries the
# binary links (each mapped to its package with dpkg -S).
#   scripts/build-deb.sh BINARY
set -euo pipefail

binary=${1:?usage: scripts/build-deb.sh BINARY}
[[ -x $binary ]] || { echo "build-deb: $binary is not an executable; build it first" >&2; exit 2; }
cd "$(dirname "$0")/.."

version=$("$binary" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
out=.build/deb
root=$out/root
rm -rf "$root"
mkdir -p "$root/DEBIAN"

make --no-print-directory install BIN="$binary" DESTDIR="$root" PREFIX=/usr SYSCONFDIR=/etc \
    UNITDIR=/lib/systemd/system >/dev/null
strip --strip-unneeded "$root/usr/bin/countersign"
gzip -9n "$root/usr/share/man/man1/countersign.1"
# /usr/share/doc/countersign (README.md, docs/, copyright) and the completions come from `make install`.

# Depends: the package of every shared library the binary needs. A library no package owns
# (the Swift runtime of a toolchain under /opt) cannot be a dependency: say so.
depends=() unowned=()
while read -r library; do
    resolved=$(readlink -f "$library")
    owner=$(dpkg -S "$library" 2>/dev/null || dpkg -S "$resolved" 2>/dev/null || dpkg -S "/usr$library" 2>/dev/null || true)
    if [[ -z $owner ]]; then
        unowned+=("$library")
        continue
    fi
    depends+=("${owner%%:*}")
done < <(ldd "$binary" | awk '$3 ~ /^\// {print $3}')
if ((${#unowned[@]})); then
    echo "build-deb: warning: ${#unowned[@]} libraries belong to no package (${unowned[0]%/*}/...);" \
         "the package runs only where they are at those paths. 'make deb' without BIN builds a" \
         "self-contained binary (Swift runtime linked statically)." >&2
fi
depends_line=$(printf '%s\n' "${depends[@]}" | sort -u | paste -sd, | sed 's/,/, /g')

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends_line|" -e "s|@SIZE@|$size|" \
    deploy/debian/control > "$root/DEBIAN/control"
echo /etc/countersign/countersign.json5 > "$root/DEBIAN/conffiles"
install -m 0755 deploy/debian/postinst deploy/debian/prerm deploy/debian/postrm "$root/DEBIAN/"

package=$out/countersign_${version}_${arch}.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$package" >/dev/null
echo "$package"
