/** How the SSE routes' documentation describes the stream (both routes share it). */
export const SSE_DESCRIPTION =
  'With follow=true: Server-Sent Events (text/event-stream), one `data:` line per event holding a JobStreamEvent as JSON, ' +
  'its `id:` the value to send back as Last-Event-ID on reconnect (nothing is missed or repeated). Idle streams get a ' +
  '`: keep-alive` comment every 15 s.';
