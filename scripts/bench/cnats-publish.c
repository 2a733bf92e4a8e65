/* The reference for trace-ship's benchmark: a plain cnats (libnats-dev) async JetStream
 * publisher, as the fleet note measured it. It reads NDJSON lines, puts whole lines into
 * messages of up to CHUNK bytes, publishes them with js_PublishAsync and up to IN_FLIGHT
 * acks pending, and waits for every ack. No stamping, no checking, no ids, no accounting.
 * Usage: cnats-publish URL SUBJECT CHUNK IN_FLIGHT < records.ndjson  (prints messages, records) */
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 5) return 2;
  const char *url = argv[1], *subject = argv[2];
  size_t chunk = (size_t)atol(argv[3]);
  natsConnection *nc = NULL;
  jsCtx *js = NULL;
  jsOptions jo;
  if (natsConnection_ConnectTo(&nc, url) != NATS_OK) return 3;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = atol(argv[4]);
  if (natsConnection_JetStream(&js, nc, &jo) != NATS_OK) return 3;
  char *buffer = malloc(chunk + 65536), *line = NULL;
  size_t used = 0, capacity = 0;
  long messages = 0, records = 0;
  ssize_t n;
  while ((n = getline(&line, &capacity, stdin)) > 0) {
    if (used + (size_t)n > chunk && used > 0) {
      while (js_PublishAsync(js, subject, buffer, (int)used, NULL) != NATS_OK) {}
      ++messages;
      used = 0;
    }
    memcpy(buffer + used, line, (size_t)n);
    used += (size_t)n;
    ++records;
  }
  if (used > 0) {
    while (js_PublishAsync(js, subject, buffer, (int)used, NULL) != NATS_OK) {}
    ++messages;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  if (js_PublishAsyncComplete(js, &po) != NATS_OK) return 4;
  printf("%ld %ld\n", messages, records);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return 0;
}
