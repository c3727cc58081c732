// A server that accepts connections and never answers: a stalled kube-apiserver (or a load
// balancer holding a half-open backend). It reads what it is sent, so the tests can tell a request
// arrived, and counts the connections still open, so they can tell the client dropped its own.
import { createServer, type Server, type Socket } from 'node:net';

export class SilentServer {
  private readonly sockets = new Set<Socket>();
  /** Requests seen (an HTTP request line per request; one connection can carry several). */
  requests = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<SilentServer> {
    let self: SilentServer | undefined;
    const server = createServer((socket) => {
      self!.sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => self!.sockets.delete(socket));
      socket.on('data', (chunk: Buffer) => {
        self!.requests += chunk.toString('latin1').match(/^[A-Z]+ \/\S* HTTP\/1\.[01]\r$/gm)?.length ?? 0;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('SilentServer: no TCP address');
    self = new SilentServer(server, `http://127.0.0.1:${address.port}`);
    return self;
  }

  /** Connections the clients have not closed yet. */
  openConnections(): number {
    return this.sockets.size;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
