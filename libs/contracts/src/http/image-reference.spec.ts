import { isImageReference, isValidJobImage } from './image-reference';

describe('isImageReference (the distribution reference grammar)', () => {
  it.each([
    'ubuntu',
    'ubuntu:22.04',
    'library/ubuntu:22.04',
    'registry/pytorch:24.05',
    'nvcr.io/nvidia/pytorch:24.05-py3',
    'localhost:5000/team/trainer:v1.2.3',
    'registry.example.com/a/b/c',
    '[::1]:5000/img:tag',
    'img@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    'reg.io/img:tag@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef',
    'a__b/c.d-e---f',
    'UPPER.host.io/lower:TAG_1',
  ])('accepts %s', (ref) => {
    expect(isImageReference(ref)).toBe(true);
  });

  it.each([
    ['an option', '--privileged'],
    ['an option with a value', '--volume=/:/host'],
    ['a short option', '-v'],
    ['a leading dash in the path', 'reg.io/-img'],
    ['upper case in the path', 'Ubuntu'],
    ['a space', 'ubuntu latest'],
    ['an empty tag', 'ubuntu:'],
    ['a tag of 129 characters', `ubuntu:${'a'.repeat(129)}`],
    ['a short digest', 'img@sha256:abc'],
    ['a trailing slash', 'reg.io/img/'],
    ['a double separator', 'a..b'],
    ['the empty string', ''],
    ['a newline', 'ubuntu\n--privileged'],
    ['a name over 255 characters', `reg.io/${'a'.repeat(250)}`],
  ])('refuses %s', (_why, ref) => {
    expect(isImageReference(ref)).toBe(false);
  });
});

describe('isValidJobImage', () => {
  it.each<[unknown, boolean]>([
    ['none', true],
    ['ubuntu:22.04', true],
    ['--privileged', false],
    [42, false],
    [null, false],
  ])('%p -> %p', (image, ok) => {
    expect(isValidJobImage(image)).toBe(ok);
  });
});
