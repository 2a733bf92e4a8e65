# Waits for the shell tests (sourced), on what the system shows, with a generous deadline
# that fails the wait when it expires (a loaded machine is slow; a fixed sleep would either
# waste time or pass before the event).
#   wait_until SECONDS COMMAND...   runs COMMAND every 20 ms until it succeeds (status 0), or
#                                   returns 1 once SECONDS have passed
#   file_has FILE TEXT              FILE exists and contains TEXT (a fixed string)
#   lines_at_least FILE N           FILE has at least N lines
WAIT_DEADLINE_S=${WAIT_DEADLINE_S:-60}

wait_until() {
  local until=$(($(date +%s%N) + $1 * 1000000000))
  shift
  until "$@"; do
    [ "$(date +%s%N)" -lt "$until" ] || return 1
    sleep 0.02  # pace: the polling interval of a wait with a deadline
  done
}
file_has() { [ -f "$1" ] && grep -qF -- "$2" "$1"; }
lines_at_least() { [ -f "$1" ] && [ "$(wc -l < "$1")" -ge "$2" ]; }
