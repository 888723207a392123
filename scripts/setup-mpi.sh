#!/usr/bin/env bash
# Install what the `mpi` feature of ltr-cli (data-parallel training under mpirun) needs, when it is missing:
# Debian's Open MPI (openmpi-bin: mpirun; libopenmpi-dev: headers and libmpi) and libclang-dev (rsmpi's bindgen).
# Idempotent and quiet when everything is there; `cargo xtask test` runs it before the MPI tests.
#
# Open MPI refuses to start as root unless OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 are set
# (the tests set both for their own mpirun).
set -euo pipefail

# Installed means dpkg's status "install ok installed": `dpkg -s` also succeeds for a package removed but not purged
# (status "deinstall ok config-files"), whose headers are gone.
installed() {
    [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]
}
missing=()
command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
installed libopenmpi-dev || missing+=(libopenmpi-dev)
installed libclang-dev || missing+=(libclang-dev)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
status=0
"$(dirname "$0")/apt-install.sh" setup-mpi "${missing[@]}" || status=$?
if [ "$status" -eq 2 ]; then
    echo "setup-mpi: need ${missing[*]} (Open MPI with headers, and libclang), and this system has no apt-get;" \
        "install them with your package manager, or run 'cargo xtask test --no-mpi'" >&2
    exit 1
fi
exit "$status"
