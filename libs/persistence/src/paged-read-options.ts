/**
 * How a read of a whole set (every node row, every last-heard time) goes in pages. A reader whose
 * event loop also serves latency-bound work (the scheduler's cycles) passes `betweenPages` to pace
 * the read, so that parsing 50,000 rows takes a share of its time instead of all of it for a while.
 */
export interface PagedReadOptions {
  /** Rows or members per page (each reader has its default). */
  pageSize?: number;
  /** Awaited after each page but the last, with how long that page took (asked -> parsed), ms. */
  betweenPages?: (pageMs: number) => Promise<void>;
}
