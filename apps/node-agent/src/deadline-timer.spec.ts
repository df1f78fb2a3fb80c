import { startDeadline } from './deadline-timer';

describe('startDeadline', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it.each<[string, number]>([
    ['two seconds', 2_000],
    ['a year, past what one setTimeout can wait', 31_536_000_000],
  ])('fires once, after %s and not before', (_n, ms) => {
    const fired = jest.fn();
    startDeadline(ms, fired);
    jest.advanceTimersByTime(ms - 1);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(ms * 2);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('never fires once cancelled', () => {
    const fired = jest.fn();
    startDeadline(1_000, fired).cancel();
    jest.advanceTimersByTime(5_000);
    expect(fired).not.toHaveBeenCalled();
  });
});
