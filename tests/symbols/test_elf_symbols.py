#!/usr/bin/env python3
"""itm-decode --elf against binutils as the oracle (issue 21, item 1).

Builds two Cortex-M firmwares with Debian's arm-none-eabi toolchain and -g: the symbol
firmware (tests/symbols/fw: a named vector table, C and C++ code, -fno-inline) and the
Cortex-M rig firmware of the eko tests (-O2, inlining on). A PC-sample stream aimed at every
halfword of every function (and at addresses outside them), exception packets for every
exception number and TaskIsr IsrEnter records are written here from the ARM ARM (D4.3.2,
D4.3.3) and the Callisto binary protocol, not by tracepipe's encoder. Then, record by record:
  function   == the symbol `nm -C -S` says holds the PC (and, -fno-inline, addr2line -f -C)
  file:line  == addr2line's (the DWARF line table, read by binutils)
  handler    == the symbol at the vector table word (read with objcopy), as nm names it
  IsrEnter   == the same handler name, with no --isr-names
Fails without the cross compiler (scripts/install-deps installs it)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from checks import Checks  # noqa: E402
from firmware import addr2line, build_rig_firmware, build_symbols_firmware, functions_of, vector_words  # noqa: E402

build_dir = sys.argv[1]
source_dir = os.path.dirname(os.path.abspath(__file__))
itm_decode = os.path.join(build_dir, "tools", "itm-decode")
check = Checks(show_passes=False)


def stream(pcs, exception_numbers, isr_ids):
    out = bytearray()
    for pc in pcs:  # D4.3.3: discriminator 2, 4-byte payload
        out += bytes([0x17]) + struct.pack("<I", pc)
    for number in exception_numbers:  # D4.3.2: discriminator 1, 2-byte payload, FN 1 = entered
        out += bytes([0x0E, number & 0xFF, ((number >> 8) & 1) | (1 << 4)])
    for isr_id in isr_ids:  # Callisto TaskIsr on port 1: type 2 (IsrEnter), A = id, B = 0
        out += bytes([0x09, 2]) + bytes([0x0B]) + struct.pack("<I", isr_id) + bytes([0x0B]) + struct.pack("<I", 0)
    return bytes(out)


def check_firmware(elf, out, label, addr2line_names):
    functions = functions_of(elf)
    check(len(functions) >= 5, f"{label}: nm lists the functions ({len(functions)})")
    holder = {}
    pcs = []
    for start, size, name in functions:
        for pc in range(start, start + max(size, 2), 2):
            holder[pc] = name
            pcs.append(pc)
    ends = sorted(start + size for start, size, _ in functions)
    outside = [pc for pc in (0x2, ends[-1] + 0x40, 0x20000000) if pc not in holder]
    pcs += outside
    words = vector_words(elf, out)
    by_address = {start: name for start, _, name in functions}
    handlers = {n: by_address[w & ~1] for n, w in enumerate(words) if n > 0 and w != 0 and (w & ~1) in by_address}
    check(len(handlers) >= 3, f"{label}: the vector table names handlers ({len(handlers)})")
    numbers = list(range(1, len(words)))
    data = stream(pcs, numbers, sorted(handlers))
    result = subprocess.run([itm_decode, "--elf", elf], input=data, capture_output=True, check=True)
    records = [json.loads(line) for line in result.stdout.decode().splitlines()]
    samples = [r["event"]["data"] for r in records if r["event"]["kind"] == "PcSample"]
    exceptions = [r["event"]["data"] for r in records if r["event"]["kind"] == "Exception"]
    isrs = [r["event"]["data"] for r in records if r["event"]["kind"] == "IsrEnter"]
    check(len(samples) == len(pcs), f"{label}: a record per PC sample ({len(samples)} of {len(pcs)})")
    oracle = addr2line(elf, pcs)
    wrong_function = [s for s in samples if s.get("function") != holder.get(s["pc"])]
    check(not wrong_function, f"{label}: every PC named by the function nm says holds it "
                              f"({len(samples) - len(wrong_function)} of {len(samples)}; first wrong: "
                              f"{wrong_function[:1]})")
    if addr2line_names:
        wrong = [(s, o) for s, o in zip(samples, oracle) if s["pc"] in holder and s.get("function") != o[0]]
        check(not wrong, f"{label}: every function as addr2line -f names it (first wrong: {wrong[:1]})")
    wrong_line = []
    for sample, (_, place) in zip(samples, oracle):
        file, _, line = place.rpartition(":")
        line = line.split()[0]
        expected = (file, int(line)) if file != "??" and line.isdigit() and int(line) > 0 else None
        got = (sample["file"], sample["line"]) if "file" in sample else None
        if got != expected:
            wrong_line.append((sample["pc"], got, expected))
    check(not wrong_line, f"{label}: every file:line as addr2line reads the DWARF line table "
                          f"({len(samples) - len(wrong_line)} of {len(samples)}; first wrong: {wrong_line[:1]})")
    named = sum(1 for s in samples if "file" in s)
    check(named > len(samples) // 2, f"{label}: most samples have a line ({named} of {len(samples)})")
    wrong_handler = [e for e in exceptions if e.get("handler") != handlers.get(e["number"])]
    check(len(exceptions) == len(numbers) and not wrong_handler,
          f"{label}: every exception's handler is the vector table's, as nm names it (first wrong: "
          f"{wrong_handler[:1]})")
    wrong_isr = [i for i in isrs if i.get("name") != handlers.get(i["isr_id"])]
    check(len(isrs) == len(handlers) and not wrong_isr,
          f"{label}: IsrEnter names from the vector table without --isr-names ({len(isrs)}; first wrong: "
          f"{wrong_isr[:1]})")
    text = subprocess.run([itm_decode, "--elf", elf, "--format", "text"], input=data, capture_output=True,
                          check=True).stdout.decode()
    first = functions[0]
    check(first[2] in text, f"{label}: the text format names functions too")
    check_trace_serve(elf, data, records, label)


SERVE_CLIENT = r"""
import { createRequire } from 'node:module';
const WebSocket = createRequire(process.argv[1])('ws');
const ws = new WebSocket(process.argv[2]);
const wanted = Number(process.argv[3]);
let got = 0;
let started = false;
let ready = false;
setTimeout(() => { console.error(`timeout after ${got} events`); process.exit(1); }, 30000);  // deadline: fails when it expires
ws.on('message', (raw) => {
  const m = JSON.parse(raw);
  if (m.type === 'Hello') ws.send(JSON.stringify({ type: 'Connect', data: { probe_selector: null, chip: null, token: null } }));
  if (m.type === 'Status' && m.data.connected && !started) {
    ws.send(JSON.stringify({ type: 'SetFilter', data: { port_mask: null, event_types: ['*'] } }));
    ws.send(JSON.stringify({ type: 'Start', data: { allow_mask: 0xFFFFFFFF, baud_rate: 2000000 } }));
    started = true;
  }
  // The server answers Start with Meta once this client is tracing: only then may the
  // records be sent (ready any earlier, they could all pass before this client traces).
  if (m.type === 'Meta' && started && !ready) {
    ready = true;
    console.log('ready');
  }
  if (m.type === 'Event' && !String(m.data.event.kind).startsWith('Top')) {
    console.log(JSON.stringify(m.data));
    // exit once stdout has taken every line (process.exit alone may cut a pipe's pending writes)
    if (++got === wanted) process.stdout.write('', () => process.exit(0));
  }
});
"""


def check_trace_serve(elf, data, named_records, label):
    """trace-serve --elf names the records of the same stream decoded without --elf exactly as
    itm-decode --elf does (checked above against binutils), as a WebSocket client receives them."""
    node = shutil.which("node")
    package = os.path.join(source_dir, "..", "serve", "package.json")
    if node is None or not os.path.isdir(os.path.join(source_dir, "..", "serve", "node_modules", "ws")):
        check(False, f"{label}: trace-serve --elf needs node and tests/serve/node_modules (scripts/install-deps)")
        return
    plain = subprocess.run([itm_decode], input=data, capture_output=True, check=True).stdout
    # The probe of test_elf_threads: trace-serve must not be inside libdw on two threads either.
    probe = os.path.join(build_dir, "tests", "libdw_one_at_a_time.so")
    serve = subprocess.Popen([os.path.join(build_dir, "tools", "trace-serve"), "--elf", elf, "--listen", "127.0.0.1:0",
                              "--exit-on-eof"], stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "LD_PRELOAD": probe} if os.path.exists(probe) else None)
    try:
        line = b""
        while b"serving on" not in line:
            line = serve.stderr.readline()
            if not line:
                raise AssertionError("trace-serve did not start")
        port = line.decode().rsplit(":", 1)[1].split()[0].strip("/")
        client = subprocess.Popen([node, "--input-type=module", "-e", SERVE_CLIENT, package, f"ws://127.0.0.1:{port}/ws",
                                   str(len(named_records))], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert client.stdout.readline().strip() == b"ready"
        serve.stdin.write(plain)
        serve.stdin.close()
        out, err = client.communicate(timeout=60)
    finally:
        serve.kill()
        serve.wait()
    # The stream has no target timestamps: each decode stamps host time, so times differ.
    untimed = lambda records: [{k: v for k, v in r.items() if k != "timestamp"} for r in records]  # noqa: E731
    received = untimed(json.loads(line) for line in out.decode().splitlines())
    named_records = untimed(named_records)
    check(client.returncode == 0 and received == named_records,
          f"{label}: trace-serve --elf gives a client the records itm-decode --elf names ({len(received)} of "
          f"{len(named_records)}; first different: "
          f"{next(((a, b) for a, b in zip(received, named_records) if a != b), None)}; {err[-200:]!r})")


def main():
    if shutil.which("arm-none-eabi-gcc") is None or shutil.which("arm-none-eabi-addr2line") is None:
        print("FAIL missing arm-none-eabi-gcc or binutils-arm-none-eabi: run scripts/install-deps")
        return 1
    with tempfile.TemporaryDirectory() as out:
        symbols_elf = build_symbols_firmware(out)
        check_firmware(symbols_elf, out, "symbol firmware", addr2line_names=True)
        cpp = [name for _, _, name in functions_of(symbols_elf) if "::" in name]
        check(len(cpp) >= 3, f"C++ names are demangled as nm -C shows them ({cpp})")
        check_firmware(build_rig_firmware(out), out, "rig firmware (-O2)", addr2line_names=False)
        missing = subprocess.run([itm_decode, "--elf", os.path.join(out, "none.elf")], input=b"",
                                 capture_output=True)
        check(missing.returncode == 3 and b"none.elf" in missing.stderr,
              f"a missing ELF is exit 3 naming it ({missing.returncode}: {missing.stderr[:120]})")
        not_elf = os.path.join(out, "not.elf")
        open(not_elf, "w").write("hello")
        bad = subprocess.run([itm_decode, "--elf", not_elf], input=b"", capture_output=True)
        check(bad.returncode == 6 and b"not an ELF" in bad.stderr,
              f"a file that is not an ELF is exit 6 ({bad.returncode}: {bad.stderr[:120]})")
    return check.summary()


sys.exit(main())
