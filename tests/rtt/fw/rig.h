/* Hooks the RTT/SystemView rig gives SEGGER's sources (included first, with -include):
 * the timestamp SystemView records (the rig's own counter: QEMU does not model DWT_CYCCNT)
 * and SEGGER_SYSVIEW_ON_EVENT_RECORDED, SystemView's documented hook after every packet it
 * tries to write, which tells the rig each attempt's length. */
#ifndef RIG_H
#define RIG_H
unsigned rig_timestamp(void);
void rig_event_recorded(unsigned bytes);
#define SEGGER_SYSVIEW_GET_TIMESTAMP() rig_timestamp()
#define SEGGER_SYSVIEW_ON_EVENT_RECORDED(NumBytes) rig_event_recorded((unsigned)(NumBytes))
#endif
