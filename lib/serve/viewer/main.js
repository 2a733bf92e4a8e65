// tracepipe web viewer: a Callisto protocol client with console, timeline, markers,
// counters, exceptions and PC-sample views. No dependencies; served by trace-serve.
//
// Built to keep up with a live target: it asks trace-serve for the batched form (the
// "tracepipe.batch" subprotocol: many records per message, an extension a Callisto client
// never sees), holds a million records in a columnar ring, and keeps every view's
// aggregates (timeline bars, exception counts, PC shares, counter series) up to date as
// records arrive, so a redraw never rescans the buffer. Only a change of filters or search
// rebuilds them, once.
//
// The entry module: it composes the others and runs the render loop. The modules import
// downwards only (tests/layering fails on an import cycle): what a module must call above
// itself, main.js hands it as a function (a tab's view to the controls, the filters'
// rebuilds to the ingest and the connection).
import { $ } from './config.js';
import { ring } from './ring.js';
import { live, state } from './state.js';
import { freshAggregates } from './aggregates.js';
import { createIngest } from './ingest.js';
import { connect } from './connection.js';
import { markRecord, markUs, showView } from './view.js';
import { rebuildKindFilters, rebuildPortFilters } from './filters.js';
import { setupControls } from './controls.js';
import { exportCsv, exportNdjson } from './export.js';
import { heldRecord, renderLog } from './log.js';
import { renderTimeline, setupTimelineInput } from './timeline.js';
import { renderCounters, setupCountersInput } from './counters.js';
import { loadChartData, loadUnchanged, renderLoad, setupLoadInput } from './load.js';
import { durationsChartData, renderDurations, setupDurationsInput } from './durations.js';
import { flameChartData, renderFlame, setupFlameInput } from './flame.js';
import { renderExceptions, renderMarkers, renderPcSamples, renderStatistics } from './tables.js';

function formatRate(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return value.toFixed(0);
}

function renderStats() {
  const s = state.stats;
  if (s) {
    $('stat-events').textContent = formatRate(s.events_per_sec);
    $('stat-bytes').textContent = formatRate(s.bytes_per_sec);
    // Cumulative drops as a share of everything offered to this viewer so far.
    const offered = s.offered_total ?? 0;
    const share = offered > 0 ? (100 * (s.dropped_total ?? 0)) / offered : 0;
    $('stat-drops').textContent = `${s.dropped_total ?? 0} (${share.toFixed(2)}%)`;
    $('stat-cpu').textContent = s.cpu_load == null ? '–' : `${(100 * s.cpu_load).toFixed(1)}%`;
  }
  $('stat-buffered').textContent = `${ring.count}`;
}

// Each tab's view, drawn from the aggregates.
const RENDERERS = {
  console: () => renderLog($('console'), live.agg.console, (r) => r.data.message),
  timeline: renderTimeline,
  load: renderLoad,
  durations: renderDurations,
  flame: renderFlame,
  markers: renderMarkers,
  counters: renderCounters,
  exceptions: renderExceptions,
  pcsamples: renderPcSamples,
  statistics: renderStatistics,
  records: () => renderLog($('records'), live.agg.all, (r) => r.json, heldRecord),
};

// A tab whose drawing can tell it would draw the same again (the render loop skips it then).
const UNCHANGED = { load: loadUnchanged };

let lastRender = 0;
function frame(now) {
  renderStats();
  // Views redraw at most 10 times a second whatever the event rate.
  if (state.dirty && !state.paused && now - lastRender > 100) {
    lastRender = now;
    // A tab that would draw the same again stays due: it is drawn once that is no longer so.
    if (!UNCHANGED[state.activeTab]?.()) {
      state.dirty = false;
      RENDERERS[state.activeTab]();
    }
  }
  requestAnimationFrame(frame);
}

window.tracepipe = {
  state,
  exportNdjson,
  exportCsv,
  render: () => RENDERERS[state.activeTab](),
  loadChart: loadChartData,
  durationsChart: durationsChartData,
  flameChart: flameChartData,
};

live.agg = freshAggregates();
state.mark.us = markUs;
state.mark.record = markRecord;
showView();
setupControls((tab) => RENDERERS[tab]());
setupTimelineInput();
setupLoadInput();
setupCountersInput();
setupDurationsInput();
setupFlameInput();
const ingest = createIngest({ port: rebuildPortFilters, kind: rebuildKindFilters });
connect({ ...ingest, portMap: rebuildPortFilters });
requestAnimationFrame(frame);
