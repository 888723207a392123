#!/usr/bin/env bash
# Install Debian packages with apt-get, as root or through sudo: `apt-install.sh NAME [--no-recommends] PACKAGE…`.
# NAME prefixes the messages (the calling script's name). The setup scripts decide what is missing and call this
# for the apt-get part, so the root/sudo and fresh-machine handling lives in one place.
#
# Exit status: 0 when installed, 2 when this system has no apt-get (the caller says what to do instead), and
# apt-get's failure otherwise.
set -euo pipefail

name=$1
shift
options=(-y -q)
if [ "${1:-}" = "--no-recommends" ]; then
    options+=(--no-install-recommends)
    shift
fi
if ! command -v apt-get >/dev/null 2>&1; then
    exit 2
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
echo "$name: installing $*" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet: update once when the first attempt cannot find the packages.
$sudo apt-get install "${options[@]}" "$@" >/dev/null ||
    { $sudo apt-get update -q >/dev/null && $sudo apt-get install "${options[@]}" "$@" >/dev/null; }
