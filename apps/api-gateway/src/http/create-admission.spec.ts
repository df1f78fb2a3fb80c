import { CreateAdmission } from './create-admission';

describe('CreateAdmission', () => {
  it('lets in up to the limit, refuses past it, and a slow answer lowers the limit', () => {
    let now = 0;
    const door = new CreateAdmission({ targetMs: 100, min: 2, max: 3, backoff: 0.9 }, () => now);
    const leaves = [door.enter(), door.enter(), door.enter()];
    expect(leaves.every((l) => l !== null)).toBe(true);
    expect(door.enter()).toBeNull();
    now = 150;
    leaves[0]!();
    leaves[0]!(); // twice is once
    expect(door.limit).toBe(2);
    // Two still inside, limit 2: still no room.
    expect(door.enter()).toBeNull();
    leaves[1]!();
    expect(door.enter()).not.toBeNull();
  });

  it('fast answers while the limit is used grow it back, never past max', () => {
    let now = 0;
    const door = new CreateAdmission({ targetMs: 100, min: 1, max: 4, backoff: 0.5 }, () => now);
    const a = door.enter()!;
    const b = door.enter()!;
    now = 500;
    a();
    expect(door.limit).toBe(1); // 0.5 x the 1 in flight when a started, at least min
    const c = door.enter();
    expect(c).toBeNull(); // b is still inside
    b(); // slow too, but within targetMs of the last decrease: no second cut
    expect(door.limit).toBe(1);
    for (let i = 0; i < 10; i++) {
      const l = door.enter()!;
      now += 10;
      l();
    }
    // One at a time uses one slot: the limit grows (by 1/limit) while that is at least half of it, then stops.
    expect(door.limit).toBe(2.5);
    for (let round = 0; round < 50; round++) {
      const inside: Array<() => void> = [];
      for (let l = door.enter(); l; l = door.enter()) inside.push(l);
      now += 10;
      for (const l of inside) l();
    }
    expect(door.limit).toBe(4);
  });

  it('turned off (no options), lets everything in', () => {
    const door = new CreateAdmission(null);
    for (let i = 0; i < 10_000; i++) expect(door.enter()).not.toBeNull();
  });
});
