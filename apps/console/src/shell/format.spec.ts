import { shortId } from './format';

describe('shortId', () => {
  it('tells apart jobs created in the same minute (time-ordered ids share their start)', () => {
    const a = '01a24338-ab33-77a2-b520-d8db645eb98a';
    const b = '01a24338-ab33-77a2-b520-dfbefa542019';
    expect(shortId(a)).toBe('645eb98a');
    expect(shortId(a)).not.toBe(shortId(b));
  });

  it('leaves a short id whole', () => {
    expect(shortId('abc')).toBe('abc');
  });
});
