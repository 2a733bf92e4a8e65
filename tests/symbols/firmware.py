"""The firmwares the --elf tests decode against, built here with Debian's arm-none-eabi
toolchain and -g, and binutils' view of them (the oracle)."""
import os
import struct
import subprocess

source_dir = os.path.dirname(os.path.abspath(__file__))


def run(args, **kwargs):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kwargs).stdout


def build_symbols_firmware(out):
    fw = os.path.join(source_dir, "fw")
    common = ["-mcpu=cortex-m3", "-mthumb", "-O1", "-fno-inline", "-g", "-ffreestanding", "-nostdlib"]
    run(["arm-none-eabi-gcc", *common, "-c", os.path.join(fw, "startup.c"), "-o", os.path.join(out, "startup.o")])
    run(["arm-none-eabi-g++", *common, "-fno-exceptions", "-fno-rtti", "-c", os.path.join(fw, "app.cpp"), "-o",
         os.path.join(out, "app.o")])
    elf = os.path.join(out, "symbols-fw.elf")
    run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-nostdlib", "-nostartfiles", "-T",
         os.path.join(source_dir, "..", "eko", "fw", "cm3.ld"), os.path.join(out, "startup.o"),
         os.path.join(out, "app.o"), "-o", elf])
    return elf


def build_rig_firmware(out):
    fw = os.path.join(source_dir, "..", "eko", "fw")
    elf = os.path.join(out, "fw-cm3.elf")
    run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "-O2", "-g", "-ffreestanding", "-fno-builtin",
         "-fno-tree-loop-distribute-patterns", "-nostdlib", "-nostartfiles", f"-I{fw}", "-Wl,--build-id=none",
         "-DIDLE_LOOPS=200000", "-DHOLD_IN_USE=100", "-T", os.path.join(fw, "cm3.ld"),
         os.path.join(fw, "cm3_startup.c"), os.path.join(fw, "tracer.c"), "-lgcc", "-o", elf])
    return elf


def functions_of(elf):
    """(start, size, name) of every function: readelf -sW says which symbols are FUNC (nm's "t"
    also marks data placed in .text), nm -C -S gives their demangled names."""
    starts = set()
    for line in run(["arm-none-eabi-readelf", "-sW", elf]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC":
            starts.add(int(parts[1], 16) & ~1)
    functions = []
    for line in run(["arm-none-eabi-nm", "-C", "-S", "--defined-only", elf]).splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4 and int(parts[0], 16) in starts:
            functions.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    return functions


def vector_words(elf, out):
    raw = os.path.join(out, "vectors.bin")
    run(["arm-none-eabi-objcopy", "-O", "binary", "--only-section=.isr_vector", elf, raw])
    data = open(raw, "rb").read()
    return list(struct.unpack(f"<{len(data) // 4}I", data[: len(data) // 4 * 4]))


def addr2line(elf, addresses):
    lines = run(["arm-none-eabi-addr2line", "-f", "-C", "-e", elf, *[hex(a) for a in addresses]]).splitlines()
    return [(lines[2 * i], lines[2 * i + 1]) for i in range(len(addresses))]
