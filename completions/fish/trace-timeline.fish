# fish completion for trace-timeline: generated from its option definitions (scripts/generate-docs);
# do not edit.
complete -c trace-timeline -s h -l help -d 'Print this help message and exit'
complete -c trace-timeline -l strict -d 'A line that is not a record is an error (exit 6), not skipped'
complete -c trace-timeline -l cpu-hz -x -d 'Target clock in Hz: cycle timestamps become microseconds'
complete -c trace-timeline -l since -x -d 'Only records with timestamp >= T'
complete -c trace-timeline -l until -x -d 'Only records with timestamp < T'
complete -c trace-timeline -s o -l output -r -F -d 'Write output to FILE (\'-\' = stdout)'
complete -c trace-timeline -l append -d 'Append to the output file instead of truncating it'
complete -c trace-timeline -s q -l quiet -d 'Print only errors on stderr'
complete -c trace-timeline -s v -l verbose -d 'More detail on stderr (repeatable)'
complete -c trace-timeline -l log-format -x -a 'text json' -d 'Diagnostics on stderr as text or JSON lines'
complete -c trace-timeline -l version -d 'Display program version information and exit'
