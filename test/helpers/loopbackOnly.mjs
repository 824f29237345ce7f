// Loaded into every test process (tap's node-arg in package.json) and, through
// NODE_OPTIONS, into every Node process a test starts (`wharf serve`, the CLI): any
// outbound TCP connection to an address outside 127.0.0.0/8 and ::1 is refused before
// it is attempted, and fails the test file.
//
// Plain JavaScript, not TypeScript: it must load into child processes started from any
// working directory, where `--import=tsx` would not resolve, and before tsx is registered.
//
// How it holds: net.Socket.prototype.connect is where every client connection starts
// (net.connect, http's agents, undici and so fetch, tls.connect, pg). An IP address is
// checked there and refused by a synchronous throw, so no packet leaves; a host name is
// checked once resolved, in the socket's lookup, before the connection is attempted.
// A refusal may be caught by the code under test (fetch turns it into "fetch failed"),
// so it is also recorded: the test process exits non-zero, naming the address, when it
// or any process it started was refused anything.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import dns from 'node:dns';

const LOG = 'WHARF_LOOPBACK_GUARD_LOG';
const MARK = Symbol.for('wharf.loopbackGuard');

/** True for 127.0.0.0/8, ::1 and 127.x written as an IPv4-mapped IPv6 address. */
export function isLoopback(address) {
  const a = String(address)
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (net.isIPv4(a)) return a.startsWith('127.');
  if (!net.isIPv6(a)) return false;
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a) ?? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  return Boolean(mapped && mapped[1].startsWith('127.'));
}

/** The guard's error: names the address and says why. */
function refusal(host, port) {
  const err = new Error(`loopback guard: refused an outbound connection to ${host}:${port}; tests may only connect to 127.0.0.0/8 and ::1`);
  err.code = 'ERR_LOOPBACK_GUARD';
  return err;
}

/** Records a refusal where the test process that owns the log will see it, and says it on stderr at once. */
function record(err) {
  process.stderr.write(`${err.message}\n${err.stack?.split('\n').slice(1, 6).join('\n') ?? ''}\n`);
  try {
    fs.appendFileSync(process.env[LOG], `${process.pid} ${err.message}\n`);
  } catch {
    // No log (the guard was loaded by hand): the throw and stderr line are all there is.
  }
}

/** What a call to Socket#connect connects to: a path (local), or a port and host. */
function target(args) {
  const first = Array.isArray(args[0]) ? args[0][0] : args[0];
  if (first !== null && typeof first === 'object') return { options: first, path: first.path, host: first.host ?? 'localhost', port: first.port };
  if (typeof first === 'string' && !/^\d+$/.test(first)) return { path: first };
  return { host: typeof args[1] === 'string' ? args[1] : 'localhost', port: first };
}

function install() {
  if (globalThis[MARK]) return;
  globalThis[MARK] = true;
  // The process that loads the guard first owns the log; the processes it starts inherit it.
  if (!process.env[LOG]) {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wharf-guard-')), 'refused.log');
    fs.writeFileSync(file, '');
    process.env[LOG] = file;
    process.on('exit', () => {
      const refused = fs.readFileSync(file, 'utf8');
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
      if (refused) {
        process.stderr.write(`loopback guard: this test (or a process it started) tried to reach a non-loopback address:\n${refused}`);
        process.exitCode = 1;
      }
    });
    const self = `--import=${import.meta.url}`;
    if (!(process.env.NODE_OPTIONS ?? '').includes(self)) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${self}`.trim();
  }

  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function guardedConnect(...args) {
    const to = target(args);
    if (to.path !== undefined && to.path !== null && to.path !== '') return connect.apply(this, args);
    if (net.isIP(String(to.host).replace(/^\[|\]$/g, ''))) {
      if (!isLoopback(to.host)) {
        const err = refusal(to.host, to.port);
        record(err);
        throw err;
      }
      return connect.apply(this, args);
    }
    // A name: check every address it resolves to before any is tried.
    const lookup = to.options?.lookup ?? dns.lookup;
    const checked = (hostname, opts, callback) => {
      if (typeof opts === 'function') [opts, callback] = [{}, opts];
      lookup(hostname, opts, (err, address, family) => {
        if (err) return callback(err, address, family);
        const list = Array.isArray(address) ? address.map((a) => a.address) : [address];
        const bad = list.find((a) => !isLoopback(a));
        if (bad !== undefined) {
          const refused = refusal(`${hostname} (${bad})`, to.port);
          record(refused);
          return callback(refused);
        }
        callback(null, address, family);
      });
    };
    const options = { ...(to.options ?? { host: to.host, port: to.port }), lookup: checked };
    const listener = Array.isArray(args[0]) ? args[0][1] : args.find((a) => typeof a === 'function');
    return listener ? connect.call(this, options, listener) : connect.call(this, options);
  };
}

install();
