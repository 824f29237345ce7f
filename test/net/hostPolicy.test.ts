import t from 'tap';
import { addressAllowed, parseHostPolicy, resolveAllowed } from '../../src/net/hostPolicy.ts';

/** The host part of a URL as the WHATWG parser normalizes it, which is how Wharf reads payload and source URLs. */
const host = (url: string) => new URL(url).hostname;

t.test('external refuses loopback, private, link-local and unspecified in every spelling', async (t) => {
  const external = parseHostPolicy(['external']);
  for (const url of ['http://127.0.0.1/', 'http://127.1/', 'http://2130706433/', 'http://0x7f.1/', 'http://017700000001/', 'http://[::ffff:127.0.0.1]/', 'http://[::1]/', 'http://10.0.0.1/', 'http://192.168.1.1/', 'http://172.16.0.1/', 'http://[fd00::1]/', 'http://169.254.169.254/', 'http://[fe80::1]/', 'http://0.0.0.0/', 'http://[::]/']) {
    t.notOk(addressAllowed(external, host(url)), url);
  }
  t.ok(addressAllowed(external, '8.8.8.8'));
  t.ok(addressAllowed(external, '2606:4700::1111'));
});

t.test('loopback, private, CIDR, names and * open only what they name', async (t) => {
  const loopback = parseHostPolicy(['loopback']);
  t.ok(addressAllowed(loopback, '127.0.0.1'));
  t.ok(addressAllowed(loopback, '::1'));
  t.notOk(addressAllowed(loopback, '10.0.0.1'));
  t.notOk(addressAllowed(loopback, '8.8.8.8'));
  t.ok(addressAllowed(parseHostPolicy(['private']), '10.9.8.7'));
  const any = parseHostPolicy(['*']);
  t.ok(addressAllowed(any, '10.0.0.1'));
  t.notOk(addressAllowed(any, '169.254.169.254'), 'metadata needs a CIDR');
  t.notOk(addressAllowed(any, '0.0.0.0'), 'unspecified never');
  t.ok(addressAllowed(parseHostPolicy(['169.254.169.254/32']), '169.254.169.254'), 'named by CIDR');
  t.notOk(addressAllowed(parseHostPolicy(['0.0.0.0/0']), '0.0.0.0'), 'unspecified never, even by CIDR');
  const named = parseHostPolicy(['*.corp.example', 'hooks.example.org']);
  t.ok(addressAllowed(named, '10.0.0.5', 'ci.corp.example'));
  t.ok(addressAllowed(named, '10.0.0.5', 'hooks.example.org'));
  t.notOk(addressAllowed(named, '10.0.0.5', 'corp.example.evil'));
  t.throws(() => parseHostPolicy(['nonsense!']));
  t.throws(() => parseHostPolicy(['10.0.0.0/99']));
});

t.test('a name is judged by the addresses it resolves to', async (t) => {
  await t.rejects(resolveAllowed(parseHostPolicy(['external']), 'localhost'), { code: 'EHOSTPOLICY', message: 'blocked by host policy' });
  t.same(await resolveAllowed(parseHostPolicy(['loopback']), '127.0.0.1'), ['127.0.0.1']);
  const addrs = await resolveAllowed(parseHostPolicy(['loopback']), 'localhost');
  t.ok(addrs.length > 0 && addrs.every((a) => a === '127.0.0.1' || a === '::1'));
});
