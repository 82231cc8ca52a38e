#!/bin/bash
# Make sure ibprov's test images exist in the local podman store:
#   1. local store            (instant)
#   2. zstd cache tarball     ${IBPROV_IMAGE_CACHE:-/var/cache/ibprov/images}
#   3. build from scratch     debootstrap + podman import (base), podman build (node)
# and refresh the cache after a build. No container registry is ever contacted.
# Prints the node image reference on the last line of stdout.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${IBPROV_IMAGE_CACHE:-/var/cache/ibprov/images}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# the Debian release of the images: bookworm (Debian 12, the default) or trixie (Debian 13)
SUITE=${IBPROV_SUITE:-bookworm}
case "$SUITE" in bookworm|trixie) ;; *) echo "ensure-images: IBPROV_SUITE=$SUITE: bookworm or trixie" >&2; exit 2;; esac
BASE=${IBPROV_BASE_IMAGE:-localhost/ibprov-base:$SUITE}
NODE=${IBPROV_NODE_IMAGE:-localhost/ibprov-node:$SUITE}
# The node tag carries a hash of its Containerfile: editing it invalidates the cache.
NODE_KEY=$(sha256sum "$HERE/node/Containerfile" | cut -c1-12)
export CONTAINERS_CONF=${CONTAINERS_CONF:-$HERE/containers.conf}
mkdir -p "$CACHE"

log() { echo "ensure-images: $*" >&2; }

save_cache() {  # save_cache <tag> <file>
  podman save "$1" | zstd -q -T0 -3 -o "$2.tmp.$$" && mv "$2.tmp.$$" "$2"
}

load_or_build() {  # load_or_build <tag> <build-function>
  local tag=$1 build=$2 file
  file="$CACHE/$(echo "$tag" | tr '/:' '__').tar.zst"
  if podman image exists "$tag"; then
    log "have $tag"
    [ -s "$file" ] || save_cache "$tag" "$file"
    return
  fi
  if [ -s "$file" ]; then
    log "loading $tag from $file"
    zstd -dc "$file" | podman load -q >&2 || log "cache $file unusable, rebuilding"
    podman image exists "$tag" && return
  fi
  log "building $tag"
  "$build" >&2
  save_cache "$tag" "$file"
}

build_base() {
  local root
  command -v debootstrap >/dev/null || { log "debootstrap missing (apt-get install debootstrap)"; exit 1; }
  root=$(mktemp -d "${TMPDIR:-/tmp}/ibprov-rootfs.XXXXXX")
  debootstrap --variant=minbase --include=python3 "$SUITE" "$root" "$MIRROR"
  tar -C "$root" -c . | podman import - "$BASE"
  rm -rf "$root"
}

build_node() {
  podman build --build-arg BASE="$BASE" -t "$NODE-$NODE_KEY" -f "$HERE/node/Containerfile" "$HERE/node"
}

load_or_build "$BASE" build_base
load_or_build "$NODE-$NODE_KEY" build_node
# the stable tag always points at the image built from the current Containerfile
podman tag "$NODE-$NODE_KEY" "$NODE"
echo "$NODE"
