/**
 * The tool policy document `baton.mcp-policy/1` (docs/mcp.md, schemas/mcp-tool-policy.schema.json):
 * which upstream tools are consequential and, for each, how Baton derives the occurrence from the
 * call. Strict JSON (duplicate members refused), unknown members refused, every pointer checked.
 * It is a standalone document today; the same object is meant to sit under `mcp` in the config file.
 */
import { BatonError } from '../core/errors.js';
import { parseStrictJson } from '../core/json.js';
import { MCP_INVERSE_META, MCP_LEASE_META } from '../leases/index.js';
import { ACTION_CLASSES, isActionClass, type ActionClass } from '../missions/index.js';
import { isPointer, pointerTokens } from './pointer.js';
import { NAME, Read } from './read.js';

export const POLICY_FORMAT = 'baton.mcp-policy/1';

const r: Read = new Read('mcp_policy_invalid');
const TOOL = /^[A-Za-z0-9_.-]{1,128}$/;
const META_KEY = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$/;

export type CreationKeyRule =
  | { readonly from: 'arguments'; readonly pointers: readonly string[] }
  | { readonly from: 'meta'; readonly member: string };

export type NativeKeyPlacement =
  { readonly to: 'argument'; readonly pointer: string } | { readonly to: 'meta'; readonly member: string };

export type AmountRule = { readonly pointer: string } | { readonly fixed: number };

/** Where a read-tool argument comes from: the original call's arguments, or Baton's binding. */
export type ReadArgument =
  | { readonly from: 'argument'; readonly pointer: string }
  | { readonly from: 'nativeKey' }
  | { readonly from: 'occurrenceId' }
  | { readonly from: 'providerReference' };

export interface ReadToolRule {
  readonly name: string;
  readonly arguments: Readonly<Record<string, ReadArgument>>;
  /**
   * Whether the read tool is the provider's authenticated channel. This build accepts only
   * `false`: Baton's API takes authenticated observations from its pinned status sources alone
   * (AOC-REQ-009), so the read tool's answer is unauthenticated evidence (docs/mcp.md "Settlement").
   */
  readonly authenticatedChannel: false;
}

/**
 * The mission binding (mission-aware harness): the agent names its Mission in `_meta[meta]`; the
 * gateway's MissionGate (mission-gate.ts: Baton's mission view) checks it before anything else.
 */
export interface MissionRule {
  readonly required: boolean;
  /**
   * The harness action class the call is judged as (docs/harness.md "Views and staleness"): it sets
   * how fresh Baton's Mission view must be — 5 s for high-consequence classes (MRT-01, HAR-25).
   * Absent: `consequential_write`, the harness's own default.
   */
  readonly actionClass: ActionClass;
  /** The `_meta` member that carries the agent's mission reference. */
  readonly meta: string;
}

export interface ToolPolicy {
  readonly tool: string;
  /** The upstream that serves it, when several are configured (null: the one that lists it). */
  readonly upstream: string | null;
  readonly provider: {
    readonly profileId: string;
    readonly profileVersion: string;
    readonly account?: string;
    readonly environment?: string;
  };
  readonly creationKey: CreationKeyRule;
  /** Profile request member → pointer into the arguments; null: the arguments themselves. */
  readonly request: Readonly<Record<string, string>> | null;
  readonly nativeKey: NativeKeyPlacement | null;
  readonly authority: { readonly id: string; readonly amount: AmountRule };
  readonly mission: MissionRule | null;
  /** Pointers into the upstream's structuredContent: the native status and provider reference. */
  readonly acknowledgement: { readonly status: string | null; readonly reference: string | null };
  readonly settle: { readonly statusSources: boolean; readonly readTool: ReadToolRule | null };
}

export interface McpPolicy {
  readonly format: typeof POLICY_FORMAT;
  /** The lineage whose executor generations the gateway's sessions are. */
  readonly lineage: string;
  readonly tools: ReadonlyMap<string, ToolPolicy>;
}

function pointer(value: unknown, path: string): string {
  if (typeof value !== 'string' || !isPointer(value)) r.fail(path, 'must be a JSON pointer (RFC 6901)');
  return value;
}

function creationKey(value: unknown, path: string): CreationKeyRule {
  const f = r.object(value, path, ['from'], ['pointers', 'member']);
  if (r.oneOf(f['from'], `${path}.from`, ['arguments', 'meta']) === 'meta') {
    r.object(value, path, ['from', 'member']);
    return { from: 'meta', member: r.string(f['member'], `${path}.member`, META_KEY) };
  }
  r.object(value, path, ['from', 'pointers']);
  const list = r.array(f['pointers'], `${path}.pointers`, 1, 16);
  return { from: 'arguments', pointers: list.map((p, i) => pointer(p, `${path}.pointers[${i}]`)) };
}

function nativeKey(value: unknown, path: string): NativeKeyPlacement | null {
  if (value === undefined) return null;
  const f = r.object(value, path, ['to'], ['pointer', 'member']);
  if (r.oneOf(f['to'], `${path}.to`, ['argument', 'meta']) === 'meta') {
    r.object(value, path, ['to', 'member']);
    return { to: 'meta', member: r.string(f['member'], `${path}.member`, META_KEY) };
  }
  r.object(value, path, ['to', 'pointer']);
  const p = pointer(f['pointer'], `${path}.pointer`);
  if (p === '') r.fail(`${path}.pointer`, 'must name a member, not the whole arguments');
  return { to: 'argument', pointer: p };
}

function authority(value: unknown, path: string): ToolPolicy['authority'] {
  const f = r.object(value, path, ['id', 'amount']);
  const a = r.object(f['amount'], `${path}.amount`, [], ['pointer', 'fixed']);
  const has = (k: string): boolean => a[k] !== undefined;
  if (has('pointer') === has('fixed')) r.fail(`${path}.amount`, 'needs exactly one of pointer, fixed');
  const amount: AmountRule = has('pointer')
    ? { pointer: pointer(a['pointer'], `${path}.amount.pointer`) }
    : { fixed: r.integer(a['fixed'], `${path}.amount.fixed`, 1) };
  return { id: r.string(f['id'], `${path}.id`, NAME), amount };
}

function requestMap(value: unknown, path: string): Record<string, string> | null {
  if (value === undefined) return null;
  const f = r.object(value, path, [], Object.keys(value ?? {}));
  const entries = Object.entries(f).map(([k, v]) => [r.string(k, path, NAME), pointer(v, `${path}.${k}`)]);
  if (entries.length === 0) r.fail(path, 'must map at least one member');
  return Object.fromEntries(entries) as Record<string, string>;
}

/** A class the harness knows, or a refusal naming the value: an unknown one would be judged as another. */
function actionClass(value: unknown, path: string): ActionClass {
  if (value === undefined) return 'consequential_write';
  if (isActionClass(value)) return value;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeof value;
  throw new BatonError(
    'mcp_policy_invalid',
    `${path}: ${shown} is not an action class (${ACTION_CLASSES.join(', ')})`,
    {
      path,
      value: typeof value === 'string' ? value.slice(0, 128) : null,
    },
  );
}

function mission(value: unknown, path: string): MissionRule | null {
  if (value === undefined) return null;
  const f = r.object(value, path, ['required'], ['actionClass', 'meta']);
  return {
    required: r.boolean(f['required'], `${path}.required`),
    actionClass: actionClass(f['actionClass'], `${path}.actionClass`),
    meta: f['meta'] === undefined ? 'baton/mission' : r.string(f['meta'], `${path}.meta`, META_KEY),
  };
}

function acknowledgement(value: unknown, path: string): ToolPolicy['acknowledgement'] {
  if (value === undefined) return { status: null, reference: null };
  const f = r.object(value, path, [], ['status', 'reference']);
  const opt = (k: string): string | null => (f[k] === undefined ? null : pointer(f[k], `${path}.${k}`));
  return { status: opt('status'), reference: opt('reference') };
}

function readArgument(value: unknown, path: string): ReadArgument {
  const f = r.object(value, path, ['from'], ['pointer']);
  const from = r.oneOf(f['from'], `${path}.from`, [
    'argument',
    'nativeKey',
    'occurrenceId',
    'providerReference',
  ]);
  if (from === 'argument') return { from, pointer: pointer(f['pointer'], `${path}.pointer`) };
  r.object(value, path, ['from']);
  return { from };
}

function readTool(value: unknown, path: string): ReadToolRule | null {
  if (value === undefined) return null;
  const f = r.object(value, path, ['name', 'arguments'], ['authenticatedChannel']);
  // Fail closed (docs/mcp.md "Settlement"): an unsigned MCP answer never settles an occurrence.
  if (
    f['authenticatedChannel'] !== undefined &&
    r.boolean(f['authenticatedChannel'], `${path}.authenticatedChannel`)
  ) {
    r.fail(
      `${path}.authenticatedChannel`,
      'true is not supported: only a status source pinned in the provider profile may settle (AOC-REQ-009)',
    );
  }
  const a = r.object(f['arguments'], `${path}.arguments`, [], Object.keys(f['arguments'] ?? {}));
  const args = Object.fromEntries(
    Object.entries(a).map(([k, v]) => [k, readArgument(v, `${path}.arguments.${k}`)]),
  );
  return { name: r.string(f['name'], `${path}.name`, TOOL), arguments: args, authenticatedChannel: false };
}

function settle(value: unknown, path: string): ToolPolicy['settle'] {
  if (value === undefined) return { statusSources: true, readTool: null };
  const f = r.object(value, path, [], ['statusSources', 'readTool']);
  return {
    statusSources:
      f['statusSources'] === undefined ? true : r.boolean(f['statusSources'], `${path}.statusSources`),
    readTool: readTool(f['readTool'], `${path}.readTool`),
  };
}

/** How pointer `a` lies to pointer `b`: the same member, inside it, containing it, or apart. */
function relation(a: string, b: string): 'equal to' | 'inside' | 'containing' | null {
  const x = pointerTokens(a) ?? [];
  const y = pointerTokens(b) ?? [];
  const prefix = (p: readonly string[], q: readonly string[]): boolean =>
    p.length <= q.length && p.every((t, i) => q[i] === t);
  if (x.length === y.length) return prefix(x, y) ? 'equal to' : null;
  if (prefix(y, x)) return 'inside';
  return prefix(x, y) ? 'containing' : null;
}

/**
 * A native key argument must lie apart from what the agent sends for the creation key and the
 * amount: Baton supplies the key and refuses a call that carries it (AOC-CASE-006), so a key at, in
 * or around one of those pointers would refuse every call — refused here, when the policy is loaded.
 */
function nativeKeyApart(p: ToolPolicy, path: string): void {
  if (p.nativeKey?.to !== 'argument') return;
  const native = p.nativeKey.pointer;
  const others: [string, string][] = [];
  if (p.creationKey.from === 'arguments')
    p.creationKey.pointers.forEach((ptr, i) => others.push([`creationKey.pointers[${i}]`, ptr]));
  if ('pointer' in p.authority.amount) others.push(['authority.amount.pointer', p.authority.amount.pointer]);
  for (const [name, ptr] of others) {
    const how = relation(native, ptr);
    if (how !== null)
      r.fail(
        `${path}.nativeKey.pointer`,
        `${JSON.stringify(native)} is ${how} ${name} ${JSON.stringify(ptr)}: Baton supplies the native key and refuses a call that carries it, so every call would be refused`,
      );
  }
}

/**
 * The call's `_meta` members the policy gives a meaning — the creation key (a string the agent
 * sends), the Mission reference (an object the agent sends), the native key (Baton's, refused from
 * the agent, AOC-CASE-006) and the compensation lease and its inverse payload (src/leases/carriage.ts)
 * — must be different members: one member cannot carry two of them, so such a policy would refuse
 * every call (a creation key that is also the native key is both required and refused) or overwrite
 * one with the other. Refused here, when the policy is loaded.
 */
function metaApart(p: ToolPolicy, path: string): void {
  const named: [string, string, string][] = [
    ['', `the compensation lease (_meta.${MCP_LEASE_META})`, MCP_LEASE_META],
    ['', `the compensation lease's inverse payload (_meta.${MCP_INVERSE_META})`, MCP_INVERSE_META],
  ];
  if (p.creationKey.from === 'meta')
    named.push(['creationKey.member', 'creationKey.member', p.creationKey.member]);
  if (p.mission !== null) named.push(['mission.meta', 'mission.meta', p.mission.meta]);
  if (p.nativeKey?.to === 'meta') named.push(['nativeKey.member', 'nativeKey.member', p.nativeKey.member]);
  named.forEach(([at, , member], i) => {
    const earlier = named.slice(0, i).find(([, , m]) => m === member);
    if (earlier !== undefined)
      r.fail(
        `${path}.${at}`,
        `${JSON.stringify(member)} is also ${earlier[1]}: one _meta member cannot carry both, so every call would be refused`,
      );
  });
}

const TOOL_MEMBERS = ['upstream', 'request', 'nativeKey', 'mission', 'acknowledgement', 'settle'];

function toolPolicy(tool: string, value: unknown, path: string): ToolPolicy {
  const f = r.object(value, path, ['provider', 'creationKey', 'authority'], TOOL_MEMBERS);
  const p = r.object(
    f['provider'],
    `${path}.provider`,
    ['profileId', 'profileVersion'],
    ['account', 'environment'],
  );
  const optional = (k: string): Record<string, string> =>
    p[k] === undefined ? {} : { [k]: r.string(p[k], `${path}.provider.${k}`, NAME) };
  const policy: ToolPolicy = {
    tool,
    upstream: f['upstream'] === undefined ? null : r.string(f['upstream'], `${path}.upstream`, NAME),
    provider: {
      profileId: r.string(p['profileId'], `${path}.provider.profileId`, NAME),
      profileVersion: r.string(p['profileVersion'], `${path}.provider.profileVersion`, NAME),
      ...optional('account'),
      ...optional('environment'),
    },
    creationKey: creationKey(f['creationKey'], `${path}.creationKey`),
    request: requestMap(f['request'], `${path}.request`),
    nativeKey: nativeKey(f['nativeKey'], `${path}.nativeKey`),
    authority: authority(f['authority'], `${path}.authority`),
    mission: mission(f['mission'], `${path}.mission`),
    acknowledgement: acknowledgement(f['acknowledgement'], `${path}.acknowledgement`),
    settle: settle(f['settle'], `${path}.settle`),
  };
  nativeKeyApart(policy, path);
  metaApart(policy, path);
  if (!policy.settle.statusSources && policy.settle.readTool === null) {
    r.fail(`${path}.settle`, 'needs the status sources or a read tool to settle an unknown outcome');
  }
  return policy;
}

/** Read a parsed policy object (the standalone file, or later the config file's `mcp` member). */
export function readPolicy(value: unknown): McpPolicy {
  const f = r.object(value, '$', ['format', 'lineage', 'tools']);
  if (f['format'] !== POLICY_FORMAT) r.fail('$.format', `must be ${POLICY_FORMAT}`);
  const t = r.object(f['tools'], '$.tools', [], Object.keys(f['tools'] ?? {}));
  const tools = new Map<string, ToolPolicy>();
  for (const [name, spec] of Object.entries(t)) {
    const path = `$.tools.${name}`;
    tools.set(r.string(name, path, TOOL), toolPolicy(name, spec, path));
  }
  for (const p of tools.values()) {
    const read = p.settle.readTool;
    // The read tool is called after a lost answer: were it a policy tool (this one included), that
    // call would send a consequential call again outside Baton — the payment re-sent (AOC-REQ-010).
    if (read !== null && tools.has(read.name))
      r.fail(
        `$.tools.${p.tool}.settle.readTool.name`,
        `${read.name} is a consequential tool of this policy; a read tool must only read (it is called after a lost answer)`,
      );
  }
  return { format: POLICY_FORMAT, lineage: r.string(f['lineage'], '$.lineage', NAME), tools };
}

/** Parse the policy document's bytes strictly (src/core/json.ts), then read it. */
export function parsePolicy(bytes: Uint8Array | string): McpPolicy {
  let parsed;
  try {
    parsed = parseStrictJson(bytes);
  } catch (cause) {
    const code = cause instanceof BatonError ? cause.code : 'json_malformed';
    throw new BatonError(
      'mcp_policy_invalid',
      `the policy is not strict JSON (${code})`,
      { cause: code },
      { cause },
    );
  }
  return readPolicy(parsed);
}
