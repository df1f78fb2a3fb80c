import { NO_IMAGE } from '../kafka/attempt-end-reasons';

/*
 * The distribution reference grammar (github.com/distribution/reference, regexp.go), the one every
 * OCI runtime and registry client parses: `[host[:port]/]path[:tag][@digest]`. Every part starts
 * with a letter or digit, so no reference can be read as a runtime's option.
 */
const alphanumeric = '[a-z0-9]+';
const separator = '(?:[._]|__|[-]+)';
const pathComponent = `${alphanumeric}(?:${separator}${alphanumeric})*`;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const host = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])`;
const domainAndPort = `${host}(?::[0-9]+)?`;
const name = `(?:${domainAndPort}/)?${pathComponent}(?:/${pathComponent})*`;
const tag = '[\\w][\\w.-]{0,127}';
const digest = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';

/** `name[:tag][@digest]`, anchored; the name part is captured (the grammar caps it at 255 characters). */
const REFERENCE = new RegExp(`^(${name})(?::${tag})?(?:@${digest})?$`);
const NAME_MAX = 255;

/** Whether `image` is an image reference by the distribution grammar. */
export function isImageReference(image: string): boolean {
  const m = REFERENCE.exec(image);
  return m !== null && m[1].length <= NAME_MAX;
}

/** What a job's `image` may be (contract 5.1): `none` (run the command itself) or an image reference. */
export function isValidJobImage(image: unknown): image is string {
  return typeof image === 'string' && (image === NO_IMAGE || isImageReference(image));
}
