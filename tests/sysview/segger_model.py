"""What SEGGER's target code was asked to record, as the records sysview-decode should write:
a model of the mapping in man/sysview-decode.1, written from the calls a target made (the log
of tests/sysview/native_target.c and of the QEMU rig firmware), not from sysview-decode's code.

calls: dicts {"call", "t", "sent", "overflow", ...}; t is the target's 64-bit time in timestamp
ticks, sent whether the call's packet reached the RTT buffer, overflow whether SEGGER's Overflow
packet did just before it.
Returns a list of (timestamp, kind, data) with data None for a record without data."""
import struct


def expected_records(calls, isr_names):
    out = []
    names = {}
    marker_names = {}
    resource_names = {}
    running = None
    last_task = 0
    idle = False
    isr_stack = []
    pending_drops = 0
    drop_count = 0  # SEGGER_SYSVIEW.c DropCount: every drop but the first of each overflow
    placed = False  # records before the first system time are placed by it (their own target time)

    def time(c):
        return c["t"]

    def task_name(task, key, data):
        if task in names:
            data[key] = names[task]
        return data

    for c in calls:
        call = c["call"]
        if call == "init":
            init = c
            continue
        if call == "start":
            out.append((time(c), "SystemInfo", {"item": "trace_start"}))
            out.append((time(c), "SystemInfo", {"item": "init", "sys_hz": init["sys_hz"], "cpu_hz": init["cpu_hz"],
                                                  "ram_base": init["ram_base"], "id_shift": 0}))
            continue
        if call == "sysdesc":
            out.append((time(c), "SystemInfo", {"item": "description", "text": c["text"]}))
            continue
        if call == "task_info":
            if not placed:
                placed = True
                out.append((c["t"], "SystemInfo", {"item": "systime", "cycles": c["t"] & 0xFFFFFFFF}))
            names[c["task"]] = c["name"]
            out.append((c["t"], "TaskInfo", {"task": c["task"], "name": c["name"], "prio": c["prio"]}))
            out.append((c["t"], "StackInfo", {"task": c["task"], "base": c["base"], "size": c["size"],
                                              "used": c["used"], "name": c["name"]}))
            continue
        if call == "start_done":
            out.append((c["t"], "SystemInfo", {"item": "modules", "count": 0}))
            continue
        if call == "stop":
            out.append((c["t"], "SystemInfo", {"item": "trace_stop"}))
            continue
        t = c["t"]
        if c.get("overflow"):  # SEGGER's Overflow packet reached the buffer before this call's
            out.append((t, "Overflow", {"dropped": pending_drops, "target_count": drop_count}))
            pending_drops = 0
        if not c["sent"]:
            if pending_drops > 0:  # the first packet of an overflow is not in DropCount
                drop_count += 1
            pending_drops += 1
            continue
        if call == "start_exec":
            if idle:
                idle = False
                out.append((t, "IdleExit", None))
            source = running if running is not None else last_task
            data = task_name(c["task"], "to_name", task_name(source, "from_name", {"from_task": source,
                                                                                   "to_task": c["task"]}))
            out.append((t, "TaskSwitch", data))
            running = last_task = c["task"]
        elif call == "stop_exec":
            if running is not None:
                last_task = running
            running = None
        elif call == "idle":
            if running is not None:
                last_task = running
            running = None
            if not idle:
                idle = True
                out.append((t, "IdleEnter", None))
        elif call == "isr_enter":
            isr_stack.append(c["isr"])
            data = {"isr_id": c["isr"]}
            if c["isr"] in isr_names:
                data["name"] = isr_names[c["isr"]]
            out.append((t, "IsrEnter", data))
        elif call in ("isr_exit", "isr_exit_scheduler"):
            data = {"isr_id": isr_stack.pop() if isr_stack else 0}
            if call == "isr_exit_scheduler":
                data["to_scheduler"] = True
            out.append((t, "IsrExit", data))
        elif call in ("mark_start", "mark_stop", "mark"):
            data = {"id": c["id"]}
            if c["id"] in marker_names:
                data["name"] = marker_names[c["id"]]
            if call != "mark":
                data["phase"] = "start" if call == "mark_start" else "stop"
            out.append((t, "Marker", data))
        elif call == "name_marker":
            marker_names[c["id"]] = c["text"]
            out.append((t, "SystemInfo", {"item": "marker", "id": c["id"], "text": c["text"]}))
        elif call == "name_resource":
            resource_names[c["id"]] = c["text"]
            out.append((t, "SystemInfo", {"item": "resource", "id": c["id"], "text": c["text"]}))
        elif call == "heap_define":
            out.append((t, "HeapEvent", {"action": "define", "heap": c["heap"], "address": c["address"],
                                         "size": c["size"], "metadata": c["metadata"]}))
        elif call == "heap_alloc":
            out.append((t, "HeapEvent", {"action": "alloc", "heap": c["heap"], "address": c["address"],
                                         "size": c["size"]}))
        elif call == "heap_free":
            out.append((t, "HeapEvent", {"action": "free", "heap": c["heap"], "address": c["address"]}))
        elif call == "printf":
            out.append((t, "Text", {"message": c["format"] % tuple(c["args"]), "level": "log"}))
        elif call == "print":
            out.append((t, "Text", {"message": c["text"], "level": ["log", "warning", "error"][c["level"]]}))
        elif call == "timer_enter":
            data = {"timer": c["timer"]}
            if c["timer"] in resource_names:
                data["name"] = resource_names[c["timer"]]
            out.append((t, "TimerEnter", data))
        elif call == "timer_exit":
            out.append((t, "TimerExit", {}))
        elif call in ("ready", "blocked", "create"):
            data = {"task": c["task"], "state": {"ready": "ready", "blocked": "blocked", "create": "created"}[call]}
            if call == "blocked":
                data["cause"] = c["cause"]
            out.append((t, "TaskState", task_name(c["task"], "name", data)))
        elif call == "sample":
            value = struct.unpack("<f", struct.pack("<I", c["raw"]))[0]
            out.append((t, "DataSample", {"id": c["id"], "raw": c["raw"], "value": value}))
        elif call == "user":
            out.append((t, "UserEvent", {"event_id": c["id"], "data": varints(c["a"]) + varints(c["b"])}))
        else:
            raise ValueError(f"unknown call {call}")
    return out


def varints(value):
    """SEGGER_SYSVIEW.c ENCODE_U32."""
    out = []
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return out


def records_as_tuples(records):
    return [(r["timestamp"], r["event"]["kind"], r["event"].get("data")) for r in records]
