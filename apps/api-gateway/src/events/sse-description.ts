/** How the SSE routes' documentation describes the stream (both routes share it). */
export const SSE_DESCRIPTION =
  'With follow=true: Server-Sent Events (text/event-stream), one `data:` line per event holding a JobStreamEvent as JSON, ' +
  'its `id:` the value to send back as Last-Event-ID on reconnect (nothing is missed or repeated). Idle streams get a ' +
  "`: keep-alive` comment every 15 s. A stream ends within 1 s of its token's revocation or expiry; a token holds at most " +
  'GANTRY_STREAMS_PER_TOKEN (32) streams and log follows at once, across replicas (429 with Retry-After past it).';
