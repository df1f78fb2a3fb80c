import type { PropertyDeclarations } from 'lit';
import { PageElement } from './page-element';

/**
 * A page that lists rows of one kind, filtered by its URL query and paged with the API's cursor:
 * the rows read so far, the cursor of the next page, and whether a read is under way or failed.
 */
export class ListPage<Row> extends PageElement {
  static override properties: PropertyDeclarations = {
    query: { attribute: false },
    rows: { state: true },
    nextCursor: { state: true },
    loading: { state: true },
    error: { state: true },
  };
  declare query: URLSearchParams;
  declare rows: Row[];
  declare nextCursor: string | null;
  declare loading: boolean;
  declare error: unknown;

  constructor() {
    super();
    this.query = new URLSearchParams();
    this.rows = [];
    this.nextCursor = null;
    this.loading = true;
    this.error = null;
  }
}
