#!/bin/sh
# Installs baton from a release archive, without Rust:
#   curl -fsSL <release page>/install.sh | sh -s -- --url <archive URL>
#   sh install.sh --url https://…/baton-0.1.0-x86_64-unknown-linux-gnu.tar.gz
# Downloads the archive and its .sha256, checks the checksum, and installs `baton` into
# ~/.local/bin (--to DIR), its man pages into ~/.local/share/man/man1. Nothing is installed
# unless every step before succeeded; an existing baton is replaced in one rename.
#
# Options: --url URL (or BATON_RELEASE_URL)  --to DIR (default ~/.local/bin)
# Exit: 0 installed; 1 download, checksum or install failed (nothing changed); 2 bad arguments.
set -eu

url="${BATON_RELEASE_URL:-}"
to="${HOME}/.local/bin"
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url="${2:-}"; shift 2 || shift ;;
    --to) to="${2:-}"; shift 2 || shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$url" ]; then
  echo "install.sh: no release URL: pass --url https://…/baton-<version>-<target>.tar.gz" >&2
  exit 2
fi
case "$url" in
  *.tar.gz) ;;
  *) echo "install.sh: $url is not a release archive (baton-<version>-<target>.tar.gz)" >&2; exit 2 ;;
esac

fetch() { # URL FILE
  if command -v curl >/dev/null 2>&1; then
    curl -fsSL --retry 2 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$2" "$1"
  else
    echo "install.sh: neither curl nor wget is installed" >&2
    return 1
  fi
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
archive="$tmp/$(basename "$url")"
if ! fetch "$url" "$archive"; then
  echo "install.sh: could not download $url (check the URL and the release's assets); nothing was installed" >&2
  exit 1
fi
if ! fetch "$url.sha256" "$tmp/sum"; then
  echo "install.sh: could not download $url.sha256; without it the archive cannot be checked, nothing was installed" >&2
  exit 1
fi
want="$(awk '{print $1; exit}' "$tmp/sum")"
if command -v sha256sum >/dev/null 2>&1; then
  got="$(sha256sum "$archive" | awk '{print $1}')"
else
  got="$(shasum -a 256 "$archive" | awk '{print $1}')"
fi
if [ "$want" != "$got" ]; then
  echo "install.sh: checksum mismatch for $(basename "$url"): expected $want, got $got; nothing was installed" >&2
  exit 1
fi
if ! tar -xzf "$archive" -C "$tmp"; then
  echo "install.sh: $(basename "$url") is not a readable archive; nothing was installed" >&2
  exit 1
fi
dir="$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'baton-*' | head -n 1)"
if [ -z "$dir" ] || [ ! -x "$dir/baton" ]; then
  echo "install.sh: the archive holds no baton binary; nothing was installed" >&2
  exit 1
fi
if ! "$dir/baton" --version >/dev/null 2>&1; then
  echo "install.sh: the baton in the archive does not run on this machine (another target?); nothing was installed" >&2
  exit 1
fi
if ! mkdir -p "$to" 2>/dev/null || [ ! -w "$to" ]; then
  echo "install.sh: cannot write to $to (choose another folder with --to DIR); nothing was installed" >&2
  exit 1
fi
# Copied beside, then renamed over: a running baton keeps its file, nobody sees half a binary.
cp "$dir/baton" "$to/.baton.new.$$"
chmod 755 "$to/.baton.new.$$"
mv -f "$to/.baton.new.$$" "$to/baton"
man="${HOME}/.local/share/man/man1"
if [ -d "$dir/man" ] && mkdir -p "$man" 2>/dev/null; then
  cp "$dir/man/"*.1 "$man/" 2>/dev/null || true
fi
echo "installed $("$to/baton" --version) to $to/baton"
case ":${PATH}:" in
  *":$to:"*) ;;
  *) echo "note: $to is not on your PATH; add it (e.g. in ~/.profile: export PATH=\"$to:\$PATH\")" ;;
esac
echo "next: baton demo    (or, in your project: baton init claude|codex|gemini)"
