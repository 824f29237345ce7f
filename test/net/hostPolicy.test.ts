import t from 'tap';
import { addressAllowed, parseHostPolicy, resolveAllowed } from '../../src/net/hostPolicy.ts';

/** The host part of a URL as the WHATWG parser normalizes it, which is how Wharf reads payload and source URLs. */
const host = (url: string) => new URL(url).hostname;

t.test('external refuses loopback, private, link-local and unspecified in every spelling', async (t) => {
  const external = parseHostPolicy(['external']);
  for (const url of [
    'http://127.0.0.1/',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://017700000001/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::1]/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://172.16.0.1/',
    'http://[fd00::1]/',
    'http://169.254.169.254/',
    'http://[fe80::1]/',
    'http://0.0.0.0/',
    'http://[::]/',
  ]) {
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

/** IPv6 spellings that carry 127.0.0.1, 169.254.169.254, 10.0.0.1 and 192.168.0.1 inside them. */
const EMBEDDED_INTERNAL = [
  '::127.0.0.1',
  '::7f00:1',
  '::a9fe:a9fe',
  '::a00:1',
  '::c0a8:1', // IPv4-compatible ::/96
  '::ffff:a9fe:a9fe',
  '::ffff:0:7f00:1', // mapped, translated
  '64:ff9b::7f00:1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::10.0.0.1', // NAT64
  '2002:7f00:1::',
  '2002:a9fe:a9fe::1',
  '2002:c0a8:1:5::9', // 6to4
  '2001:0:4136:e378:8000:63bf:80ff:fffe', // Teredo, client 127.0.0.1 (inverted 80ff:fffe)
  '2001:0:4136:e378:8000:63bf:f5ff:fffe', // Teredo, client 10.0.0.1
];

t.test('IPv6 forms that embed an IPv4 address are judged by the embedded address', async (t) => {
  const external = parseHostPolicy(['external']);
  for (const addr of EMBEDDED_INTERNAL) {
    t.notOk(addressAllowed(external, addr), `${addr} refused under external`);
    t.notOk(addressAllowed(external, host(`http://[${addr}]/`)), `${addr} refused as a URL host`);
  }
  t.ok(addressAllowed(external, '::808:808'), 'IPv4-compatible public address');
  t.ok(addressAllowed(external, '64:ff9b::8.8.8.8'), 'NAT64 of a public address');
  t.ok(addressAllowed(external, '2002:808:808::1'), '6to4 of a public address');
  t.ok(addressAllowed(external, '2001:0:4136:e378:8000:63bf:f7f7:f7f7'), 'Teredo client 8.8.8.8');
  const loopback = parseHostPolicy(['loopback']);
  t.ok(addressAllowed(loopback, '::7f00:1'), 'loopback opens ::127.0.0.1');
  t.ok(addressAllowed(loopback, '::1'), '::1 stays IPv6 loopback');
  t.notOk(addressAllowed(loopback, '::a00:1'));
  t.notOk(addressAllowed(parseHostPolicy(['*']), '::a9fe:a9fe'), 'metadata needs a CIDR, however it is spelled');
  t.ok(addressAllowed(parseHostPolicy(['169.254.169.254/32']), '64:ff9b::a9fe:a9fe'), 'an IPv4 CIDR matches the embedded address');
  t.ok(addressAllowed(parseHostPolicy(['private']), '2002:c0a8:1::'));
  t.notOk(addressAllowed(external, '::2'), '::0.0.0.2 is in 0.0.0.0/8');
});

t.test('resolved addresses that embed an internal IPv4 address are refused at connect time', async (t) => {
  const external = parseHostPolicy(['external']);
  for (const addr of EMBEDDED_INTERNAL) await t.rejects(resolveAllowed(external, addr), { code: 'EHOSTPOLICY' }, addr);
  t.same(await resolveAllowed(parseHostPolicy(['loopback']), '::7f00:1'), ['::7f00:1'], 'connects to the address checked, as given');
});

t.test('a bare IP in the list means that address alone (/32, /128)', async (t) => {
  const policy = parseHostPolicy(['10.1.2.3', 'fd00::5', '::ffff:10.9.9.9']);
  t.ok(addressAllowed(policy, '10.1.2.3'));
  t.notOk(addressAllowed(policy, '10.1.2.4'));
  t.ok(addressAllowed(policy, 'fd00::5'));
  t.notOk(addressAllowed(policy, 'fd00::6'));
  t.ok(addressAllowed(policy, '10.9.9.9'), 'a mapped entry is its IPv4 address');
  t.ok(addressAllowed(policy, '::ffff:10.1.2.3'), 'a mapped spelling of a listed address');
  t.notOk(addressAllowed(policy, '8.8.8.8'), 'nothing else');
  t.same(policy.names, [], 'not taken for a host name');
  t.ok(addressAllowed(parseHostPolicy(['169.254.169.254']), '169.254.169.254'), 'a bare metadata address names it as a CIDR would');
  t.notOk(addressAllowed(parseHostPolicy(['0.0.0.0']), '0.0.0.0'), 'unspecified never');
});

/** Cloud metadata services, as the policy lists them (see METADATA in src/net/hostPolicy.ts). */
const METADATA = ['169.254.169.254', 'fd00:ec2::254', '169.254.170.2', '100.100.100.200', '168.63.129.16', 'fd20:ce::254', '192.0.0.192'];

t.test('metadata addresses are refused under every policy unless a CIDR or address names them', async (t) => {
  for (const list of [['private'], ['external'], ['*'], ['private', 'external', 'loopback'], ['*.internal']]) {
    const policy = parseHostPolicy(list);
    for (const addr of METADATA) {
      t.notOk(addressAllowed(policy, addr), `${addr} refused under ${list}`);
      t.notOk(addressAllowed(policy, addr, 'metadata.google.internal'), `${addr} refused under ${list} when reached by a listed name`);
      await t.rejects(resolveAllowed(policy, addr), { code: 'EHOSTPOLICY' }, `${addr} refused at connect time under ${list}`);
    }
    t.notOk(addressAllowed(policy, '::ffff:100.100.100.200'), `mapped Alibaba metadata refused under ${list}`);
    t.notOk(addressAllowed(policy, '64:ff9b::6464:64c8'), `NAT64 Alibaba metadata refused under ${list}`);
  }
  for (const addr of METADATA) {
    const cidr = addr.includes(':') ? `${addr}/128` : `${addr}/32`;
    t.ok(addressAllowed(parseHostPolicy([cidr]), addr), `${addr} opened by ${cidr}`);
    t.ok(addressAllowed(parseHostPolicy([addr]), addr), `${addr} opened by naming it`);
  }
  t.ok(addressAllowed(parseHostPolicy(['100.64.0.0/10']), '100.100.100.200'), 'a CIDR that holds it names it');
  // Neighbours keep their ranges' rules.
  t.ok(addressAllowed(parseHostPolicy(['private']), '100.100.100.201'));
  t.ok(addressAllowed(parseHostPolicy(['private']), 'fd00:ec2::253'));
  t.ok(addressAllowed(parseHostPolicy(['external']), '168.63.129.17'));
});

t.test('the local-use NAT64 prefix 64:ff9b:1::/48 is judged by its embedded IPv4 address', async (t) => {
  for (const list of [['*'], ['private'], ['external']]) {
    const policy = parseHostPolicy(list);
    for (const addr of ['64:ff9b:1::a9fe:a9fe', '64:ff9b:1::169.254.169.254', '64:ff9b:1:ab::6464:64c8', '64:ff9b:1::0.0.0.0']) {
      t.notOk(addressAllowed(policy, addr), `${addr} refused under ${list}`);
      t.notOk(addressAllowed(policy, host(`http://[${addr}]/`)), `${addr} refused as a URL host under ${list}`);
    }
  }
  t.notOk(addressAllowed(parseHostPolicy(['external']), '64:ff9b:1::7f00:1'), 'loopback inside');
  t.notOk(addressAllowed(parseHostPolicy(['external']), '64:ff9b:1::a00:1'), 'private inside');
  t.ok(addressAllowed(parseHostPolicy(['loopback']), '64:ff9b:1::7f00:1'));
  t.ok(addressAllowed(parseHostPolicy(['private']), '64:ff9b:1::a00:1'));
  t.ok(addressAllowed(parseHostPolicy(['external']), '64:ff9b:1::808:808'), 'a public address inside');
  t.ok(addressAllowed(parseHostPolicy(['169.254.169.254/32']), '64:ff9b:1::a9fe:a9fe'), 'an IPv4 CIDR matches the embedded address');
});
