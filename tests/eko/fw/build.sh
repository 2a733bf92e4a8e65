#!/usr/bin/env bash
# Builds the rig firmware with Debian's cross compilers: build.sh OUT_DIR [IDLE_LOOPS HOLD_IN_USE]
#   fw-cm3.elf   Cortex-M3, ELF32 little endian (qemu-system-arm -M lm3s6965evb)
#   fw-a64.elf   Cortex-A53, ELF64 little endian (qemu-system-aarch64 -M virt)
#   fw-armbe.elf Cortex-A15 BE8, ELF32 big endian (qemu-system-arm -M virt)
# A target whose compiler is missing is left out (the test says which).
set -euo pipefail
fw=$(cd "$(dirname "$0")" && pwd)
out=$1
idle=${2:-200000}
hold=${3:-100}
mkdir -p "$out"
common=(-O2 -g -ffreestanding -fno-builtin -fno-tree-loop-distribute-patterns -nostdlib -nostartfiles
        -Wall -Wextra -Werror -I"$fw" -Wl,--build-id=none -DIDLE_LOOPS="$idle" -DHOLD_IN_USE="$hold")
if command -v arm-none-eabi-gcc > /dev/null; then
  arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb "${common[@]}" -T "$fw/cm3.ld" "$fw/cm3_startup.c" "$fw/tracer.c" \
    -lgcc -o "$out/fw-cm3.elf"
  arm-none-eabi-gcc -mbig-endian -mcpu=cortex-a15 -marm -mfloat-abi=soft -mno-unaligned-access "${common[@]}" \
    -Wl,--be8 -Wl,--no-warn-rwx-segments -T "$fw/armbe.ld" "$fw/armbe_start.S" "$fw/tracer.c" -o "$out/fw-armbe.elf"
fi
if command -v aarch64-linux-gnu-gcc > /dev/null; then
  aarch64-linux-gnu-gcc -mgeneral-regs-only -mstrict-align "${common[@]}" -static -no-pie \
    -Wl,--no-warn-rwx-segments -T "$fw/a64.ld" "$fw/a64_start.S" "$fw/tracer.c" -lgcc -o "$out/fw-a64.elf"
fi
