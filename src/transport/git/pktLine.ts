/**
 * The length the 4-hex-digit header of the pkt-line at `at` gives (gitprotocol-common: the
 * header's 4 bytes included; 0, 1 and 2 are the flush, delimiter and response-end packets,
 * 4 bytes in all), -1 when those bytes are no pkt-line header (3 included), undefined when
 * fewer than 4 bytes are left.
 */
export function pktLength(bytes: Buffer, at: number): number | undefined {
  if (bytes.length < at + 4) return undefined;
  const header = bytes.toString('latin1', at, at + 4);
  if (!/^[0-9a-f]{4}$/.test(header)) return -1;
  const size = Number.parseInt(header, 16);
  return size === 3 ? -1 : size;
}
