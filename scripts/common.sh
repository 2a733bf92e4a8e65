# Sourced by scripts/demo and scripts/test: the one way the Release build is configured,
# so that running one after the other reuses the build instead of rebuilding it.
# shellcheck shell=bash
tracepipe_release_config=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DTRACEPIPE_WERROR=ON)
