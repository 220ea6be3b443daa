#!/bin/sh
# The S3-compatible store the object-storage tests run against: SeaweedFS's `weed`, built from its Go module (the
# Go module proxy serves it) into a cache of this user's, once per version. Prints the binary's path.
set -eu
version="v0.0.0-20261109003541-7506e5f91cd6"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/kindling/seaweedfs-$version"
if [ ! -x "$cache/weed" ]; then
  echo "Building SeaweedFS $version (once; a few minutes)…" >&2
  source=$(go mod download -json "github.com/seaweedfs/seaweedfs@$version" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  work=$(mktemp -d)
  cp -R "$source/." "$work"
  chmod -R u+w "$work"
  mkdir -p "$cache"
  (cd "$work" && go build -o "$cache/weed.partial" ./weed)
  mv "$cache/weed.partial" "$cache/weed"
  rm -rf "$work"
fi
echo "$cache/weed"
