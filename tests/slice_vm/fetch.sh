# Debian packages fetched by name from a Packages index and a mirror, for the
# slice_vm scripts (sourced).

# newest_package REGEX INDEX: the newest name in INDEX (a Packages .xz) that
# the extended regular expression REGEX matches whole.
newest_package() {
	local re=$1 index=$2 name
	name=$(xz -dc "$index" | sed -n 's/^Package: //p' | grep -Ex "$re" | sort -V | tail -n 1)
	[ -n "$name" ] || { echo "fetch: no package matching $re in $index" >&2; return 1; }
	echo "$name"
}

# fetch_deb PACKAGE INDEX MIRROR CACHE DEST: the package's .deb, found by
# name in INDEX, downloaded from MIRROR into CACHE (once) and unpacked into
# DEST.
fetch_deb() {
	local pkg=$1 index=$2 mirror=$3 cache=$4 dest=$5 file
	file=$(xz -dc "$index" | awk -v p="$pkg" '
		/^Package: / { cur = $2 }
		cur == p && /^Filename: / && !f { f = $2 }
		END { print f }')   # reads to the end: no broken pipe for xz
	[ -n "$file" ] || { echo "fetch_deb: no package $pkg in $index" >&2; return 1; }
	mkdir -p "$cache"
	local deb=$cache/${file##*/}
	if [ ! -s "$deb" ]; then
		curl -sSf --retry 2 -o "$deb.part" "$mirror/$file" && mv "$deb.part" "$deb" ||
			{ echo "fetch_deb: download of $pkg failed" >&2; return 1; }
	fi
	dpkg-deb -x "$deb" "$dest"
	echo "fetch_deb: $pkg from ${file##*/}" >&2
}
