/**
 * What the README's quick start leaves in a clone must not show up in `git status`: the SQLite
 * files, the domain's PRIVATE signing key written beside each database (`FILE.domain-key.pem`)
 * and `baton conformance`'s default report folder. Asked of git itself (`git check-ignore`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { repoRoot } from '../support/paths.js';

function git(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8' });
  return { status: r.error === undefined ? r.status : null, out: r.stdout ?? '' };
}

test('.gitignore: databases, their side files, domain keys and the conformance report are ignored', (t) => {
  if (git(['rev-parse', '--is-inside-work-tree']).out.trim() !== 'true') {
    t.skip('git is unavailable or this is not a git work tree: .gitignore not checked');
    return;
  }
  const ignored = [
    'baton.db',
    'baton.db-wal',
    'baton.db-shm',
    'baton.db.domain-key.pem',
    'first-call.db',
    'first-call.db-wal',
    'first-call.db-shm',
    'first-call.db.domain-key.pem',
    'baton.domain-key.pem', // the --postgres default (--domain-key)
    'examples/kept.db.domain-key.pem',
    'conformance-report/report.json',
    'conformance-report/report.md',
  ];
  const kept = ['README.md', 'profiles/sandbox-payments.json', 'docs/conformance-report/x.md'];
  // --no-index: the answer from the ignore rules alone, whatever is tracked.
  const r = git(['check-ignore', '--no-index', '--verbose', '--non-matching', ...ignored, ...kept]);
  assert.ok(r.status === 0 || r.status === 1, `git check-ignore failed (${r.status})`);
  const rule = new Map<string, string>();
  for (const line of r.out.split('\n').filter(Boolean)) {
    const [source, path] = line.split('\t');
    rule.set(path ?? '', source ?? '');
  }
  // `::` is git's source column for a path no rule matched.
  const matched = (p: string): boolean => (rule.get(p) ?? '::') !== '::';
  const notIgnored = ignored.filter((p) => !matched(p));
  assert.deepEqual(notIgnored, [], 'every one of these is ignored');
  const wronglyIgnored = kept.filter(matched);
  assert.deepEqual(wronglyIgnored, [], 'these stay visible');
});
