#!/usr/bin/env bash
# Builds the RTT/SystemView rig with SEGGER's own sources: build.sh SEGGER_DIR OUT_DIR
#   rig-cm3.elf  Cortex-M3 (qemu-system-arm -M lm3s6965evb)
#   rig-m0.elf   Cortex-M0 (qemu-system-arm -M microbit)
#   rig-rv32.elf RV32IMAC (qemu-system-riscv32 -M virt -bios none), without a C library
# SEGGER's files are compiled as they are (their warnings are theirs: -w for them only).
# shellcheck disable=SC2034  # the flag arrays are passed to build_rig by name
set -euo pipefail
fw=$(cd "$(dirname "$0")" && pwd)
segger=$1
out=$2
mkdir -p "$out"
includes=(-I"$segger/rtt/RTT" -I"$segger/rtt/Config" -I"$segger/systemview/SYSVIEW" -I"$segger/systemview/Config"
          -I"$segger/systemview/SEGGER")
# RTT_USE_ASM=0: SEGGER ships WriteSkipNoLock in assembly too (SEGGER_RTT_ASM_ARMv7M.S), not in ../shared.
defines=(-include "$fw/rig.h" -DSEGGER_SYSVIEW_RTT_BUFFER_SIZE=1024 -DRTT_USE_ASM=0)
segger_sources=("$segger/rtt/RTT/SEGGER_RTT.c" "$segger/rtt/RTT/SEGGER_RTT_printf.c"
                "$segger/systemview/SYSVIEW/SEGGER_SYSVIEW.c")

# build_rig NAME CC COMPILE_FLAGS OWN_SOURCES LINK_FLAGS LIBRARIES (the last four: array names)
# -> $out/rig-NAME.elf, linked with $fw/NAME.ld: our sources first, then SEGGER's.
build_rig() {
  local name=$1 cc=$2
  local -n compile=$3 own=$4 link=$5 libraries=$6
  local objects=() source object
  for source in "${own[@]}"; do
    object="$out/$name-$(basename "$source" .c).o"
    "$cc" "${compile[@]}" -Wall -Wextra -Werror -c "$fw/$source" -o "$object"
    objects+=("$object")
  done
  for source in "${segger_sources[@]}"; do
    object="$out/$name-$(basename "$source" .c).o"
    "$cc" "${compile[@]}" -w -c "$source" -o "$object"
    objects+=("$object")
  done
  "$cc" "${link[@]}" -Wl,--gc-sections -Wl,--no-warn-rwx-segments -T "$fw/$name.ld" "${objects[@]}" \
    "${libraries[@]}" -o "$out/rig-$name.elf"
}

arm_sources=(startup.c rig.c)
no_libraries=()
for target in cm3:cortex-m3 m0:cortex-m0; do
  cpu=${target#*:}
  # shellcheck disable=SC2034  # used through build_rig's namerefs
  arm_compile=(-mcpu="$cpu" -mthumb -O2 -g -ffunction-sections -fdata-sections "${includes[@]}" "${defines[@]}")
  arm_link=(-mcpu="$cpu" -mthumb -nostartfiles --specs=nano.specs --specs=nosys.specs)
  build_rig "${target%%:*}" arm-none-eabi-gcc arm_compile arm_sources arm_link no_libraries
done
rv_compile=(-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany -O2 -g -ffreestanding -ffunction-sections
            -fdata-sections -I"$fw/riscv" "${includes[@]}" "${defines[@]}")
rv_sources=(riscv_support.c rig.c)
rv_link=(-march=rv32imac_zicsr -mabi=ilp32 -nostdlib -nostartfiles)
rv_libraries=(-lgcc)
build_rig rv32 riscv64-unknown-elf-gcc rv_compile rv_sources rv_link rv_libraries
