// The viewer's limits (what it keeps, what it draws) and its one DOM helper.

export const HISTORY = 1000000;         // records kept for export and for rebuilding the views
export const CONSOLE_LINES = 10000;     // lines kept for the console and the records view (drawn: those in view)
export const TABLE_ROWS = 500;          // rows rendered in tables
export const MAX_BARS_PER_LANE = 50000; // timeline bars kept per lane (oldest dropped first)
export const MAX_SERIES_POINTS = 4000;  // counter points kept per series (evenly thinned)
export const MAX_TICKS = 50000;         // marker and console ticks kept for the time axis
export const BATCH_PROTOCOL = 'tracepipe.batch';
export const $ = (id) => document.getElementById(id);
