import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { pktLength } from './pktLine.ts';

// A clone's pack, carried by the server's own event loop, costs it 4-5 ms of CPU a MB:
// upload-pack writes its answer 8 KB at a time, each piece read into a new buffer, and that
// much memory outside V8's heap sets off mark-compacts of the whole heap (two for a 52 MB
// pack here: docs/benchmarks.md). So once an answer has run past RELAY_AFTER, the rest goes
// from the backend's output straight to the client's socket through a relay process, and
// the server reads none of it. Node gives a child a socket as a descriptor of its own, but
// libuv makes a child's standard input and output blocking, which the server's socket would
// share; the socket is the relay's descriptor 3 instead, left non-blocking, and the relay
// waits whenever it is full, as git's own writes do. No tool in a Debian install with git
// both waits on a full non-blocking descriptor and stops after an idle deadline (`cat` and
// `dd` give up on EAGAIN), so the relay is this short Perl program (Perl comes with git).

/** Bytes of an answer the server carries itself before it hands the rest to a relay. */
export const RELAY_AFTER = 1024 * 1024;

/** How the relay ends: 0 once the backend's output has ended and all of it was written. */
export const RELAY_IDLE_EXIT = 3;

/**
 * Copies its standard input to descriptor 3 (non-blocking) until end of input. A write the
 * socket cannot take waits for it to take something, for at most the idle deadline
 * (seconds, its argument): then it exits 3. Any other failure (the client gone) exits 2.
 */
const RELAY_PROGRAM = `use strict; use warnings; use IO::Poll qw(POLLOUT); use Errno;
$SIG{PIPE} = 'IGNORE';
my $idle = $ARGV[0];
open(my $out, '>&=', 3) or exit 2;
binmode STDIN; binmode $out;
my $poll = IO::Poll->new; $poll->mask($out => POLLOUT);
my $buf;
for (;;) {
  my $n = sysread(STDIN, $buf, 131072);
  if (!defined $n) { next if $!{EINTR}; exit 2; }
  last if $n == 0;
  my $off = 0;
  while ($off < $n) {
    my $w = syswrite($out, $buf, $n - $off, $off);
    if (defined $w) { $off += $w; next; }
    next if $!{EINTR};
    exit 2 unless $!{EAGAIN} || $!{EWOULDBLOCK};
    my $ready = $poll->poll($idle);
    exit 3 if defined $ready && $ready == 0;
  }
}
exit 0;
`;

let available: Promise<boolean> | undefined;

/** Whether this machine can run the relay (Perl with IO::Poll); asked once a process. Without it the server carries every answer. */
export function relayAvailable(): Promise<boolean> {
  available ??= new Promise((resolve) => {
    const probe = spawn('perl', ['-MIO::Poll', '-e', '1'], { stdio: 'ignore' });
    probe.on('error', () => resolve(false));
    probe.on('close', (code) => resolve(code === 0));
  });
  return available;
}

/**
 * Starts a relay from `source` (the backend's output, which the caller must stop reading and
 * close in the same turn of the event loop) to `socket`, cut after `idleMs` without a byte
 * taken. The caller must have written everything before it to the socket already.
 */
export function startRelay(source: Readable, socket: Socket, idleMs: number): ChildProcess {
  return spawn('perl', ['-e', RELAY_PROGRAM, String(idleMs / 1000)], { stdio: [source, 'ignore', 'pipe', socket] });
}

/**
 * Whether a fetch request ends its negotiation (a `done` line, in either protocol version):
 * its answer then carries the pack. Reads the body's pkt-lines while they parse.
 */
export function asksForPack(body: Buffer): boolean {
  for (let at = 0; ;) {
    const size = pktLength(body, at);
    if (size === undefined || size < 0 || at + Math.max(size, 4) > body.length) return false;
    if ((size === 8 || (size === 9 && body[at + 8] === 0x0a)) && body.toString('latin1', at + 4, at + 8) === 'done') return true;
    at += Math.max(size, 4);
  }
}
