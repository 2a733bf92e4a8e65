/* Included before SEGGER's sources by the test rigs (-include): SEGGER_SYSVIEW_ON_EVENT_RECORDED,
 * SystemView's documented hook after every packet it tries to write (SEGGER_SYSVIEW_ConfDefaults.h),
 * tells the rig each attempt's length, so that it can say which packet of a call reached the
 * buffer (an Overflow packet that fit, an event that did not). */
void rig_event_recorded(unsigned bytes);
#define SEGGER_SYSVIEW_ON_EVENT_RECORDED(NumBytes) rig_event_recorded((unsigned)(NumBytes))
