import { Option } from 'commander';
import { Column, outputWidth, renderTable } from './table';

export type OutputFormat = 'table' | 'json';

/** `-o, --output <format>`: on every command that reads. */
export function outputOption(): Option {
  return new Option('-o, --output <format>', 'table for people, json for programs').choices(['table', 'json']).default('table');
}

/** Writes what a read command found, as a table or as JSON (one document; one line per event when streaming). */
export class Printer {
  constructor(
    readonly format: OutputFormat,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {}

  json(value: unknown): void {
    this.out.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One JSON value per line: for streams, so that each line parses on its own. */
  jsonLine(value: unknown): void {
    this.out.write(`${JSON.stringify(value)}\n`);
  }

  table<T>(rows: T[], columns: Column<T>[]): void {
    this.out.write(`${renderTable(rows, columns, outputWidth(this.out))}\n`);
  }

  line(text = ''): void {
    this.out.write(`${text}\n`);
  }

  /** Either the JSON of `value`, or what `render` prints for people. */
  show<T>(value: T, render: (v: T) => void): void {
    if (this.format === 'json') this.json(value);
    else render(value);
  }
}
