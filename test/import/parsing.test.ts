import t from 'tap';
import { overallPercent, parseGitProgress } from '../../src/remote/progress.ts';
import { parseLfsPointer } from '../../src/remote/lfsScan.ts';
import { describeGitFailure, scrubSecrets } from '../../src/remote/gitErrors.ts';
import { parseSourceUrl, SourceUrlError } from '../../src/remote/url.ts';
import { lfsEndpoint } from '../../src/remote/lfsFetch.ts';
import { progressLine } from '../../src/cli/import.ts';
import { gitActivity } from '../../src/remote/gitRemote.ts';

t.test('parseGitProgress reads the last report of each kind', async (t) => {
  t.equal(parseGitProgress('Cloning into bare repository\n'), null);
  t.same(parseGitProgress('remote: Enumerating objects: 120, done.\nremote: Counting objects:  40% (48/120)\r'), {
    phase: 'counting_objects',
    percent: 40,
    objects_received: null,
    bytes_received: null,
    objects_total: null,
    bytes_per_second: null,
  });
  t.same(parseGitProgress('Receiving objects:  12% (120/1000), 1.50 MiB | 2.00 MiB/s\rReceiving objects:  45% (450/1000), 3.25 MiB | 2.10 MiB/s\r'), {
    phase: 'receiving_objects',
    percent: 45,
    objects_received: 450,
    bytes_received: Math.round(3.25 * 1024 * 1024),
    objects_total: 1000,
    bytes_per_second: Math.round(2.1 * 1024 * 1024),
  });
  t.same(parseGitProgress('Receiving objects: 100% (3/3), 512 bytes | 512.00 KiB/s, done.\n'), {
    phase: 'receiving_objects',
    percent: 100,
    objects_received: 3,
    bytes_received: 512,
    objects_total: 3,
    bytes_per_second: 512 * 1024,
  });
  t.same(parseGitProgress('Receiving objects:  10% (1/10), 20.00 KiB | 1 KiB/s\r'), {
    phase: 'receiving_objects',
    percent: 10,
    objects_received: 1,
    bytes_received: 20480,
    objects_total: 10,
    bytes_per_second: 1024,
  });
  const receiving = parseGitProgress('Receiving objects: 100% (1000/1000), 1.00 GiB | 9 MiB/s, done.\n')!;
  t.equal(receiving.bytes_received, 1024 ** 3);
  // Resolving keeps what receiving counted, and the last rate.
  t.same(parseGitProgress('Resolving deltas:  50% (5/10)\r', receiving), {
    phase: 'resolving_deltas',
    percent: 50,
    objects_received: 1000,
    bytes_received: 1024 ** 3,
    objects_total: 1000,
    bytes_per_second: 9 * 1024 ** 2,
  });
  t.equal(parseGitProgress('fatal: early EOF\n'), null);
});

t.test('parseLfsPointer takes spec v1 pointers only', async (t) => {
  const oid = 'a'.repeat(64);
  t.same(parseLfsPointer(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize 12345\n`), { oid, size: 12345 });
  t.same(parseLfsPointer(`version https://git-lfs.github.com/spec/v1\next-0-foo sha256:${'b'.repeat(64)}\noid sha256:${oid}\nsize 1\n`), { oid, size: 1 });
  t.equal(parseLfsPointer(`oid sha256:${oid}\nsize 1\n`), null);
  t.equal(parseLfsPointer(`version https://git-lfs.github.com/spec/v1\noid sha256:${'A'.repeat(64)}\nsize 1\n`), null);
  t.equal(parseLfsPointer(`version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\n`), null);
});

t.test('scrubSecrets removes credentials in every form', async (t) => {
  const creds = { username: 'bob', password: 's3cr/et+' };
  const basic = Buffer.from('bob:s3cr/et+').toString('base64');
  const text = `fatal: unable to access 'https://bob:s3cr%2Fet%2B@h.example/r.git/': x s3cr/et+ Authorization: Basic ${basic} ${basic}`;
  const out = scrubSecrets(text, creds);
  for (const secret of ['s3cr/et+', 's3cr%2Fet%2B', basic]) t.notOk(out.includes(secret), `no ${secret}`);
  t.match(out, "'https://h.example/r.git/'");
  t.equal(scrubSecrets('fatal: https://user:pw@host/x', null), 'fatal: https://host/x');
});

t.test('describeGitFailure names redirects, auth, absence and broken connections', async (t) => {
  t.match(describeGitFailure("fatal: unable to access 'http://h/r/': The requested URL returned error: 302\n", null).message, /redirect.*IMPORT_ALLOWED_HOSTS/);
  t.match(describeGitFailure("fatal: could not read Username for 'http://h': terminal prompts disabled\n", null).message, /authentication/);
  t.match(describeGitFailure('fatal: remote error: access denied or repository not exported: /x.git\n', null).message, /no Git repository/);
  const broken = describeGitFailure(
    'Receiving objects:  40% (4/10)\rfatal: the remote end hung up unexpectedly\nfatal: early EOF\nfatal: index-pack failed\n',
    null,
  );
  t.equal(broken.broken, true);
  t.equal(broken.message, 'fatal: index-pack failed');
  t.equal(describeGitFailure('fatal: something else\n', null).broken, false);
});

t.test('parseSourceUrl allows http, https and git; splits off user info', async (t) => {
  for (const bad of [
    'file:///etc',
    '/etc',
    'ext::sh -c id',
    '-uhelp',
    'ssh://git@h/r.git',
    'git+ssh://h/r.git',
    'git@github.com:a/b.git',
    'git://h:9418/r%0a.git',
    'http://h/r .git',
    'ftp://h/r',
  ]) {
    t.throws(() => parseSourceUrl(bad), SourceUrlError, bad);
  }
  const plain = parseSourceUrl('https://git.example.com/a/b.git');
  t.equal(plain.display, 'https://git.example.com/a/b.git');
  t.equal(plain.credentials, null);
  const withCreds = parseSourceUrl('https://bob:p%40ss@git.example.com/a/b.git');
  t.equal(withCreds.display, 'https://git.example.com/a/b.git');
  t.same(withCreds.credentials, { username: 'bob', password: 'p@ss' });
  t.equal(withCreds.url.href, 'https://git.example.com/a/b.git');
  t.equal(parseSourceUrl('git://127.0.0.1:9000/x.git').url.port, '9000');
});

t.test('lfsEndpoint follows git-lfs server discovery', async (t) => {
  t.equal(lfsEndpoint(new URL('https://h/a/b.git')), 'https://h/a/b.git/info/lfs');
  t.equal(lfsEndpoint(new URL('https://h/a/b')), 'https://h/a/b.git/info/lfs');
  t.equal(lfsEndpoint(new URL('https://h/a/b/')), 'https://h/a/b.git/info/lfs');
  t.equal(lfsEndpoint(new URL('git://h:9418/a/b.git')), 'https://h/a/b.git/info/lfs');
});

t.test('progressLine draws the bar the CLI shows', async (t) => {
  const job: any = { status: 'cloning', phase: 'receiving_objects', percent: 50, objects_received: 450, bytes_received: 3 * 1024 * 1024 };
  t.equal(progressLine(job, 10), 'cloning      [#####-----]  50% receiving_objects 450 objects 3.0 MiB');
  t.equal(
    progressLine({ ...job, status: 'queued', phase: null, percent: null, objects_received: null, bytes_received: null }, 4),
    'queued       [----] queued…',
    'the state, not a blank percent',
  );
  t.equal(progressLine({ ...job, phase: 'connecting', percent: null, objects_received: null, bytes_received: null }, 4), 'cloning      [----] connecting…');
});

t.test('overallPercent: one figure across phases that later phases never bring below earlier ones', async (t) => {
  const order: [string, number | null][] = [
    ['connecting', null],
    ['counting_objects', 50],
    ['compressing_objects', 100],
    ['receiving_objects', 0],
    ['receiving_objects', 76],
    ['resolving_deltas', 28],
    ['checking_connectivity', 100],
    ['fetching_lfs', 0],
    ['fetching_lfs', 50],
    ['finalizing', 0],
    ['done', 100],
  ];
  const figures = order.map(([phase, p]) => overallPercent(phase, p)!);
  t.same(
    figures,
    [...figures].sort((a, b) => a - b),
    figures.join(' '),
  );
  t.equal(figures.at(-1), 100);
  t.equal(overallPercent('whatever', 10), null);
});

t.test("gitActivity counts the pack bytes our git receives and its own local work, never the source's lines", async (t) => {
  const seen = { bytes: 0, touches: 0 };
  const feed = gitActivity({ mark: (n) => (seen.bytes += n), touch: () => seen.touches++ });
  // A source's own progress, however busy, and its made-up byte counts: nothing.
  feed('remote: Counting objects:  1% (1/100000)\rremote: Counting objects:  2% (2/100000)\r');
  feed('remote: Receiving objects:  5% (5/100), 900.00 MiB | 1 MiB/s\rremote: Resolving deltas:  50% (1/2)\r');
  t.same(seen, { bytes: 0, touches: 0 });
  // A remote line cut between two reads keeps its prefix: whole lines only.
  feed('remo');
  feed('te: Resolving deltas:  60% (3/5)\r');
  t.same(seen, { bytes: 0, touches: 0 });
  // Our git's receiving figures, counted as they grow.
  feed('Receiving objects:  10% (1/10), 20.00 KiB | 1 KiB/s\r');
  feed('Receiving objects:  20% (2/10), 30.00 KiB | 1 KiB/s\rReceiving objects:  20% (2/10), 30.00 KiB | 1 KiB/s\r');
  t.equal(seen.bytes, 30 * 1024);
  // Our git's local work on what arrived: a new percent counts once.
  feed('Resolving deltas:  10% (1/10)\rResolving deltas:  10% (1/10)\rResolving deltas:  20% (2/10)\r');
  t.equal(seen.touches, 2);
});
