// The public surface of src/mcp: the MCP gateway (DESIGN.md §1, docs/mcp.md).
export {
  DEFAULT_UPSTREAM_TIMEOUT_MS,
  MIN_UPSTREAM_TIMEOUT_MS,
  startGateway,
  type Gateway,
  type GatewaySession,
} from './gateway.js';
export {
  MISSIONS_NOT_ENFORCED,
  type GatewayOptions,
  type MissionGate,
  type MissionVerdict,
} from './gateway-types.js';
export { perRequestSignalFetch } from './http-fetch.js';
export { batonMissionGate, missionReference } from './mission-gate.js';
export { checkPolicyProfiles, type ProfileCatalog } from './profiles-check.js';
export { parsePolicy, POLICY_FORMAT, readPolicy, type McpPolicy, type ToolPolicy } from './policy.js';
export { META_CONSEQUENTIAL, META_ERROR, META_OCCURRENCE } from './results.js';
export { isLoopbackAddress, type HttpAllowOptions } from './http-guard.js';
export { serveHttp, serveStdio, type HttpGateway, type SessionSource } from './serve.js';
export { upstreamEnvironment, type UpstreamSpec } from './upstream.js';
