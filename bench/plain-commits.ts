/**
 * The MCP ceiling's two plain durable commits (WAL, synchronous = FULL) on the gateway's SQLite
 * file: one insert at entry, one update at settlement, each its own transaction — the least a
 * gateway recording both facts durably must write. Used by the ceiling's in-bench timing
 * (mcp-ceiling.ts) and by the ceiling gateway process (mcp-ceiling-gateway.ts).
 */
import Database from 'better-sqlite3';

export interface PlainCommits {
  enter(key: string): void;
  settle(key: string): void;
  close(): void;
}

export function plainCommits(file: string): PlainCommits {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS bench_ceiling (k TEXT PRIMARY KEY, v TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO bench_ceiling (k, v) VALUES (?, ?)');
  const update = db.prepare('UPDATE bench_ceiling SET v = ? WHERE k = ?');
  const row = 'x'.repeat(600); // about an occurrence row's size
  const commit = (work: () => void): void => {
    db.exec('BEGIN IMMEDIATE');
    work();
    db.exec('COMMIT');
  };
  return {
    enter: (k) => commit(() => insert.run(k, row)),
    settle: (k) => commit(() => update.run(`${row}!`, k)),
    close: () => db.close(),
  };
}
