// The live connection: one WebSocket subscribed to every session, reconnecting after a drop.
//
// On reconnect it sends, per session, the last persisted `seq` it saw, so the server replays
// exactly what was missed. Events are deduplicated by (session_id, seq, part): a replay that
// overlaps what already arrived, or a token delta sent twice, is applied once.
//
// Servers are host-wide: while anything listens (`onServers`), the socket asks for them
// (`servers.subscribe`, again after each reconnect) and gets every server after each change.

import { reportUnauthorized } from "./api";
import type { LiveEvent, ServersChanged } from "./types";

export type LiveState = "connecting" | "open" | "reconnecting" | "unauthorized" | "stopped";

type EventListener = (event: LiveEvent) => void;
type StateListener = (state: LiveState, reconnected: boolean) => void;
type ServersListener = (message: ServersChanged) => void;

const SEEN_LIMIT = 20_000;
const MAX_BACKOFF_MS = 5_000;
const BAD_AUTH = 4001;

export class LiveConnection {
  private socket: WebSocket | null = null;
  private readonly lastSeq = new Map<string, number>();
  /** Seqs known from REST snapshots: where to resume, never a reason to drop an event. */
  private readonly snapshotSeq = new Map<string, number>();
  private readonly seen = new Set<string>();
  private readonly eventListeners = new Set<EventListener>();
  private readonly stateListeners = new Set<StateListener>();
  private readonly serversListeners = new Set<ServersListener>();
  private retryTimer: number | undefined;
  private backoff = 250;
  private opened = false;
  private stopped = true;
  state: LiveState = "stopped";

  onEvent(listener: EventListener): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  onState(listener: StateListener): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Every MCP server, at once (once the socket is open) and again after each change. */
  onServers(listener: ServersListener): () => void {
    this.serversListeners.add(listener);
    this.sendIfOpen({ type: "servers.subscribe" });
    return () => {
      this.serversListeners.delete(listener);
      if (this.serversListeners.size === 0) this.sendIfOpen({ type: "servers.unsubscribe" });
    };
  }

  private sendIfOpen(message: Record<string, unknown>): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    window.clearTimeout(this.retryTimer);
    this.socket?.close(1000);
    this.socket = null;
    this.setState("stopped", false);
  }

  /** Drop the socket as a network failure would (used by tests of the reconnect path). */
  dropForTest(): void {
    this.socket?.close(4000, "dropped");
  }

  /** A session snapshot covers everything up to `seq`: a reconnect need not replay it. */
  noteSnapshot(sessionId: string, seq: number): void {
    if (seq > (this.snapshotSeq.get(sessionId) ?? 0)) this.snapshotSeq.set(sessionId, seq);
  }

  /** Per session, the last persisted seq we hold: what a reconnect asks the server to resume from. */
  sinceMap(): Record<string, number> {
    const since = Object.fromEntries(this.lastSeq);
    for (const [id, seq] of this.snapshotSeq) since[id] = Math.max(since[id] ?? 0, seq);
    return since;
  }

  private url(): string {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${window.location.host}/ws`;
  }

  private connect(): void {
    const reconnect = this.opened;
    this.setState(reconnect ? "reconnecting" : "connecting", false);
    const socket = new WebSocket(this.url());
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.backoff = 250;
      const since = this.sinceMap();
      const subscribe: Record<string, unknown> = { type: "subscribe", session_id: null };
      if (Object.keys(since).length > 0) subscribe.since = since;
      socket.send(JSON.stringify(subscribe));
      if (this.serversListeners.size > 0) socket.send(JSON.stringify({ type: "servers.subscribe" }));
      this.opened = true;
      this.setState("open", reconnect);
    };
    socket.onmessage = (message) => {
      if (this.socket !== socket) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(message.data));
      } catch {
        return;
      }
      if (parsed && typeof parsed === "object" && "session_id" in parsed && "seq" in parsed) {
        this.receive(parsed as LiveEvent);
      } else if (parsed && typeof parsed === "object" && (parsed as { type?: string }).type === "servers.changed") {
        const servers = parsed as ServersChanged;
        this.serversListeners.forEach((listener) => listener(servers));
      } else if (parsed && typeof parsed === "object" && (parsed as { type?: string }).type === "replay.more") {
        // One subscribe replays a page at most: ask for the next from the seqs we now hold.
        socket.send(JSON.stringify({ type: "subscribe", session_id: null, since: this.sinceMap() }));
      } else if (parsed && typeof parsed === "object" && (parsed as { type?: string }).type === "error") {
        // The server cut us off for falling behind: reconnecting resumes from our last seq.
        const text = String((parsed as { message?: unknown }).message ?? "");
        if (/resubscribe|fell behind/i.test(text)) socket.close(4000, "resubscribe");
      }
    };
    socket.onclose = (close) => {
      if (this.socket !== socket) return;
      this.socket = null;
      if (close.code === BAD_AUTH) {
        this.stopped = true;
        this.setState("unauthorized", false);
        reportUnauthorized();
        return;
      }
      if (this.stopped) return;
      this.setState("reconnecting", false);
      this.retryTimer = window.setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    };
  }

  private receive(event: LiveEvent): void {
    const part = event.part ?? 0;
    const key = `${event.session_id}:${event.seq}:${part}`;
    if (this.seen.has(key)) return;
    if (!event.ephemeral && event.seq <= (this.lastSeq.get(event.session_id) ?? 0)) return;
    this.seen.add(key);
    if (this.seen.size > SEEN_LIMIT) {
      // Sets iterate in insertion order: forget the oldest keys first.
      const drop = this.seen.size - SEEN_LIMIT;
      let i = 0;
      for (const old of this.seen) {
        if (i++ >= drop) break;
        this.seen.delete(old);
      }
    }
    if (!event.ephemeral) this.lastSeq.set(event.session_id, event.seq);
    this.eventListeners.forEach((listener) => listener(event));
  }

  private setState(state: LiveState, reconnected: boolean): void {
    this.state = state;
    this.stateListeners.forEach((listener) => listener(state, reconnected));
  }
}

export const live = new LiveConnection();
// A handle for browser tests (drop the socket and watch the reconnect), harmless otherwise.
(window as unknown as { __overseerLive?: LiveConnection }).__overseerLive = live;
