// Times and counts for people: units that keep 3-4 significant digits.
import { state } from './state.js';

// Seconds in the unit that keeps 3-4 significant digits readable.
function formatSeconds(seconds, digits = 3) {
  const magnitude = Math.abs(seconds);
  if (magnitude >= 1 || magnitude === 0) return `${seconds.toFixed(digits)} s`;
  if (magnitude >= 1e-3) return `${(seconds * 1e3).toFixed(digits)} ms`;
  if (magnitude >= 1e-6) return `${(seconds * 1e6).toFixed(digits)} µs`;
  return `${(seconds * 1e9).toFixed(digits)} ns`;
}

// A count with an SI prefix: 12.35 M.
export function formatCount(value) {
  const magnitude = Math.abs(value);
  if (magnitude >= 1e9) return `${(value / 1e9).toFixed(3)} G`;
  if (magnitude >= 1e6) return `${(value / 1e6).toFixed(3)} M`;
  if (magnitude >= 1e4) return `${(value / 1e3).toFixed(2)} k`;
  return String(Math.round(value));
}

// Seconds when the clock allows it (cycles with a known CPU clock, us, ns); else whole
// ticks or cycles.
function toSeconds(t, clock) {
  if (clock === 'cycles' && state.cpuHz) return t / state.cpuHz;
  if (clock === 'us') return t / 1e6;
  if (clock === 'ns') return t / 1e9;
  return null;
}

// A host_us (microseconds since 1970) as UTC wall clock: 2026-11-29 02:13:00.250123.
export function formatHostTime(us) {
  const date = new Date(Math.floor(us / 1000)).toISOString();
  return `${date.slice(0, 10)} ${date.slice(11, 19)}.${String(((us % 1e6) + 1e6) % 1e6).padStart(6, '0')}`;
}

export function formatTime(t, clock) {
  const seconds = toSeconds(t, clock);
  if (seconds !== null) return `${seconds.toFixed(6)} s`;
  return String(Math.round(t));
}

// An axis or a duration: readable units, cycles named as such.
export function formatSpan(t, clock) {
  const seconds = toSeconds(t, clock);
  if (seconds !== null) return formatSeconds(seconds);
  return `${formatCount(t)} ${clock === 'cycles' ? 'cycles' : clock === 'ticks' ? 'ticks' : ''}`.trim();
}
