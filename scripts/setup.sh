#!/usr/bin/env bash
# Installs everything attnviz needs on Debian bookworm. Idempotent: every step
# checks first and does nothing when its thing is already present.
# Sources: Debian's archive (apt) and the npm registry only.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
THIRD="$ROOT/third_party"   # git-ignored; holds source trees fetched by apt-get source
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

APT_PKGS=(
  build-essential cmake ninja-build pkg-config dpkg-dev
  emscripten nodejs npm
  libeigen3-dev libglfw3-dev libgles-dev libpng-dev libgif-dev libgtest-dev googletest zlib1g-dev
  chromium python3-numpy fonts-dejavu-core fonttools xvfb xauth
  fonts-noto-core fonts-noto-cjk fonts-noto-color-emoji  # token labels in any script (browser and native)
  libfontconfig-dev libfreetype-dev libharfbuzz-dev       # the desktop app's label rasteriser
  clang-format clang-14 libclang-rt-14-dev  # format-check; ASan/UBSan and libFuzzer builds
  clang-16 lld-16  # the relaxed-SIMD (FMA) kernel module of the web build (src/core/kernels_fma.c)
  python3-torch python3-pytest python3-nbconvert python3-ipykernel python3-pip  # python/ and its tests
)

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node/npm may come from another source than Debian: accept any working binary.
if command -v node >/dev/null && command -v npm >/dev/null; then
  tmp=(); for p in "${missing[@]}"; do [[ "$p" == nodejs || "$p" == npm ]] || tmp+=("$p"); done
  missing=("${tmp[@]+"${tmp[@]}"}")
fi

need_update=0
if [ ${#missing[@]} -gt 0 ]; then need_update=1; fi

# A deb-src entry is needed for `apt-get source imgui` and `apt-get source zlib`.
if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
   && ! grep -rqs "Types:.*deb-src" /etc/apt/sources.list.d/ 2>/dev/null; then
  echo "[setup] adding a deb-src entry for bookworm"
  $SUDO tee /etc/apt/sources.list.d/attnviz-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  need_update=1
fi
if [ ! -d "$THIRD/imgui" ] || [ ! -d "$THIRD/zlib" ]; then
  # apt-get source needs a fresh source index
  ls /var/lib/apt/lists/*Sources* >/dev/null 2>&1 || need_update=1
fi

if [ $need_update = 1 ]; then
  echo "[setup] apt-get update"
  $SUDO apt-get update -q
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] installing: ${missing[*]}"
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Third-party source trees (not vendored: fetched here, git-ignored).
fetch_source() { # name srcpkg glob
  local name="$1" pkg="$2" glob="$3"
  if [ -d "$THIRD/$name" ]; then return; fi
  echo "[setup] apt-get source $pkg"
  local tmp; tmp="$(mktemp -d)"
  (cd "$tmp" && apt-get source -q "$pkg" >/dev/null)
  mkdir -p "$THIRD"
  local dir; dir="$(find "$tmp" -maxdepth 1 -mindepth 1 -type d -name "$glob" | head -n1)"
  if [ -z "$dir" ]; then echo "[setup] ERROR: apt-get source $pkg produced no tree" >&2; exit 1; fi
  mv "$dir" "$THIRD/$name"
  rm -rf "$tmp"
}
fetch_source imgui imgui "imgui-*"
fetch_source zlib zlib "zlib-*"

# npm dev dependencies, pinned by package-lock.json.
if [ -f "$ROOT/package-lock.json" ] && { [ ! -d "$ROOT/node_modules/playwright-core" ] || [ ! -d "$ROOT/node_modules/gifenc" ] || [ ! -d "$ROOT/node_modules/terser" ]; }; then
  echo "[setup] npm ci"
  (cd "$ROOT" && npm ci --no-audit --no-fund)
fi
echo "[setup] ok"
