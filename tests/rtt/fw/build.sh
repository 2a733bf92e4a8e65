#!/usr/bin/env bash
# Builds the RTT/SystemView rig with SEGGER's own sources: build.sh SEGGER_DIR OUT_DIR
#   rig-cm3.elf  Cortex-M3 (qemu-system-arm -M lm3s6965evb)
#   rig-m0.elf   Cortex-M0 (qemu-system-arm -M microbit)
#   rig-rv32.elf RV32IMAC (qemu-system-riscv32 -M virt -bios none), without a C library
# SEGGER's files are compiled as they are (their warnings are theirs: -w for them only).
set -euo pipefail
fw=$(cd "$(dirname "$0")" && pwd)
segger=$1
out=$2
mkdir -p "$out"
includes=(-I"$segger/rtt/RTT" -I"$segger/rtt/Config" -I"$segger/systemview/SYSVIEW" -I"$segger/systemview/Config"
          -I"$segger/systemview/SEGGER")
# RTT_USE_ASM=0: SEGGER ships WriteSkipNoLock in assembly too (SEGGER_RTT_ASM_ARMv7M.S), not in ../shared.
defines=(-include "$fw/rig.h" -DSEGGER_SYSVIEW_RTT_BUFFER_SIZE=1024 -DRTT_USE_ASM=0)
for target in cm3:cortex-m3 m0:cortex-m0; do
  name=${target%%:*}
  cpu=${target#*:}
  flags=(-mcpu="$cpu" -mthumb -O2 -g -ffunction-sections -fdata-sections "${includes[@]}" "${defines[@]}")
  objects=()
  for source in "$segger/rtt/RTT/SEGGER_RTT.c" "$segger/rtt/RTT/SEGGER_RTT_printf.c" \
                "$segger/systemview/SYSVIEW/SEGGER_SYSVIEW.c"; do
    object="$out/$name-$(basename "$source" .c).o"
    arm-none-eabi-gcc "${flags[@]}" -w -c "$source" -o "$object"
    objects+=("$object")
  done
  arm-none-eabi-gcc "${flags[@]}" -Wall -Wextra -Werror -c "$fw/rig.c" -o "$out/$name-rig.o"
  arm-none-eabi-gcc "${flags[@]}" -Wall -Wextra -Werror -c "$fw/startup.c" -o "$out/$name-startup.o"
  arm-none-eabi-gcc -mcpu="$cpu" -mthumb -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections \
    -Wl,--no-warn-rwx-segments -T "$fw/$name.ld" "$out/$name-startup.o" "$out/$name-rig.o" "${objects[@]}" \
    -o "$out/rig-$name.elf"
done
rv=(-march=rv32imac_zicsr -mabi=ilp32 -mcmodel=medany -O2 -g -ffreestanding -ffunction-sections -fdata-sections
    -I"$fw/riscv" "${includes[@]}" "${defines[@]}")
objects=()
for source in "$segger/rtt/RTT/SEGGER_RTT.c" "$segger/rtt/RTT/SEGGER_RTT_printf.c" \
              "$segger/systemview/SYSVIEW/SEGGER_SYSVIEW.c"; do
  object="$out/rv32-$(basename "$source" .c).o"
  riscv64-unknown-elf-gcc "${rv[@]}" -w -c "$source" -o "$object"
  objects+=("$object")
done
riscv64-unknown-elf-gcc "${rv[@]}" -Wall -Wextra -Werror -c "$fw/rig.c" -o "$out/rv32-rig.o"
riscv64-unknown-elf-gcc "${rv[@]}" -Wall -Wextra -Werror -c "$fw/riscv_support.c" -o "$out/rv32-support.o"
riscv64-unknown-elf-gcc -march=rv32imac_zicsr -mabi=ilp32 -nostdlib -nostartfiles -Wl,--gc-sections \
  -Wl,--no-warn-rwx-segments -T "$fw/rv32.ld" "$out/rv32-support.o" "$out/rv32-rig.o" "${objects[@]}" -lgcc \
  -o "$out/rig-rv32.elf"
