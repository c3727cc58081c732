// A server that accepts connections and never answers: a stalled kube-apiserver (or a load
// balancer holding a half-open backend). It reads what it is sent, so the tests can tell a request
// arrived, and counts the connections still open, so they can tell the client dropped its own: all
// of them, or those that carried a request (undici 7, under client-node 2.x, opens a connection
// in place of one whose request was aborted and sends nothing on it: it stays open, idle, until
// undici's keep-alive timeout of 4 s ends it, unless another request goes out on it first).
import { createServer, type Server, type Socket } from 'node:net';

export class SilentServer {
  private readonly sockets = new Set<Socket>();
  /** The open connections a request came on. */
  private readonly carriedRequest = new Set<Socket>();
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
      socket.on('close', () => {
        self!.sockets.delete(socket);
        self!.carriedRequest.delete(socket);
      });
      socket.on('data', (chunk: Buffer) => {
        const requests = chunk.toString('latin1').match(/^[A-Z]+ \/\S* HTTP\/1\.[01]\r$/gm)?.length ?? 0;
        self!.requests += requests;
        if (requests > 0) self!.carriedRequest.add(socket);
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

  /** Connections a request came on that the clients have not closed yet. */
  openConnectionsThatCarriedARequest(): number {
    return this.carriedRequest.size;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
