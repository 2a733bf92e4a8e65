# fish completion for palm-recv: generated from its option definitions (scripts/generate-docs);
# do not edit.
complete -c palm-recv -f
complete -c palm-recv -s h -l help -d 'Print this help message and exit'
complete -c palm-recv -l listen -x -d 'ADDR:PORT to listen on (port 0: any free port, logged)'
complete -c palm-recv -l format -x -a 'ndjson text' -d 'ndjson, or text: rows like the Reporter\'s window, binary as hex dumps'
complete -c palm-recv -l module -x -d 'Only these modules: numbers or mem, dm, ser, sys, app'
complete -c palm-recv -l once -d 'Exit when the first sender disconnects'
complete -c palm-recv -l max-message-size -x -d 'Largest message accepted, in bytes'
complete -c palm-recv -l max-connections -x -d 'Senders at once; past it a connection is closed at once'
complete -c palm-recv -l message-timeout -x -d 'A begun message must complete within this (e.g. 10s, 500ms); idle between messages is fine'
complete -c palm-recv -l stats -d 'Print connection and message counts on stderr at exit'
complete -c palm-recv -s o -l output -r -F -d 'Write output to FILE (\'-\' = stdout)'
complete -c palm-recv -l append -d 'Append to the output file instead of truncating it'
complete -c palm-recv -s q -l quiet -d 'Print only errors on stderr'
complete -c palm-recv -s v -l verbose -d 'More detail on stderr (repeatable)'
complete -c palm-recv -l log-format -x -a 'text json' -d 'Diagnostics on stderr as text or JSON lines'
complete -c palm-recv -l version -d 'Display program version information and exit'
