// A SOCKS5 server (RFC 1928), CONNECT only, as dante or ssh -D answer, with no authentication or,
// given a login, the username/password one (RFC 1929) alone: the
// destination is taken as the client sends it — an IPv4 or IPv6 address, or a domain name the
// server resolves with its own name table — and the reply says what happened (0x00 succeeded,
// 0x04 host unreachable for a name it cannot resolve, 0x05 connection refused).
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A CONNECT the server got: the destination as sent (`domain` for a name, else the address family). */
export interface SocksConnect {
  kind: 'ipv4' | 'domain' | 'ipv6';
  host: string;
  port: number;
}

export interface Socks5Proxy {
  /** e.g. socks5://127.0.0.1:40123, socks5://[::1]:40123 */
  url: string;
  seen: SocksConnect[];
  /** The username and password each client authenticated with (RFC 1929), right or wrong. */
  logins: { user: string; password: string }[];
  close(): Promise<void>;
}

const REPLY = { succeeded: 0x00, hostUnreachable: 0x04, connectionRefused: 0x05, commandNotSupported: 0x07 };

/**
 * Starts the server on `listen` (127.0.0.1 unless given, e.g. ::1); `hosts` is its name table
 * (name → address). With `login`, a client is served only once it authenticated with that
 * username and password.
 */
export async function startSocks5Proxy(
  hosts: Record<string, string>,
  { login, listen = '127.0.0.1' }: { login?: { user: string; password: string }; listen?: string } = {},
): Promise<Socks5Proxy> {
  const seen: SocksConnect[] = [];
  const logins: { user: string; password: string }[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    let buffered = Buffer.alloc(0);
    let stage: 'greeting' | 'login' | 'request' | 'open' = 'greeting';
    // the reply, bound address 0.0.0.0:0; a failure closes the connection after it
    const answer = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);
    const fail = (code: number) => void client.end(answer(code));
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === 'greeting') {
        if (buffered.length < 2 || buffered.length < 2 + buffered[1]!) return;
        if (buffered[0] !== 0x05) return void client.destroy();
        const methods = buffered.subarray(2, 2 + buffered[1]!);
        buffered = buffered.subarray(2 + buffered[1]!);
        const method = login === undefined ? 0x00 : 0x02;
        if (!methods.includes(method)) return void client.end(Buffer.from([0x05, 0xff]));
        client.write(Buffer.from([0x05, method]));
        stage = login === undefined ? 'request' : 'login';
      }
      if (stage === 'login') {
        // VER 0x01, ULEN, UNAME, PLEN, PASSWD
        if (buffered.length < 2 || buffered.length < 3 + buffered[1]! || buffered.length < 3 + buffered[1]! + buffered[2 + buffered[1]!]!)
          return;
        const userLength = buffered[1]!;
        const passwordLength = buffered[2 + userLength]!;
        const user = buffered.subarray(2, 2 + userLength).toString('utf8');
        const password = buffered.subarray(3 + userLength, 3 + userLength + passwordLength).toString('utf8');
        buffered = buffered.subarray(3 + userLength + passwordLength);
        logins.push({ user, password });
        if (user !== login!.user || password !== login!.password) return void client.end(Buffer.from([0x01, 0x01]));
        client.write(Buffer.from([0x01, 0x00]));
        stage = 'request';
      }
      if (stage !== 'request' || buffered.length < 5) return;
      const kind = buffered[3] === 0x01 ? 'ipv4' : buffered[3] === 0x03 ? 'domain' : buffered[3] === 0x04 ? 'ipv6' : undefined;
      if (kind === undefined) return void client.destroy();
      const hostLength = kind === 'ipv4' ? 4 : kind === 'ipv6' ? 16 : 1 + buffered[4]!;
      if (buffered.length < 4 + hostLength + 2) return;
      const raw = buffered.subarray(4, 4 + hostLength);
      const host =
        kind === 'ipv4'
          ? [...raw].join('.')
          : kind === 'domain'
            ? raw.subarray(1).toString('latin1')
            : [...Array(8)].map((_, i) => raw.readUInt16BE(i * 2).toString(16)).join(':');
      const port = buffered.readUInt16BE(4 + hostLength);
      const rest = buffered.subarray(4 + hostLength + 2);
      stage = 'open';
      client.off('data', onData);
      seen.push({ kind, host, port });
      if (buffered[1] !== 0x01) return fail(REPLY.commandNotSupported);
      const address = kind === 'domain' ? hosts[host] : host;
      if (address === undefined) return fail(REPLY.hostUnreachable);
      const upstream = net.connect(port, address);
      sockets.add(upstream);
      let connected = false;
      upstream.on('connect', () => {
        connected = true;
        client.write(answer(REPLY.succeeded));
        if (rest.length > 0) upstream.write(rest);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => (connected ? client.destroy() : fail(REPLY.connectionRefused)));
    };
    client.on('data', onData);
  });
  await new Promise<void>((resolve) => server.listen(0, listen, resolve));
  return {
    url: `socks5://${listen.includes(':') ? `[${listen}]` : listen}:${(server.address() as AddressInfo).port}`,
    seen,
    logins,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
