// The public surface of src/server (DESIGN.md §8, docs/api.md).
export { API_VERSION, buildServer, DEFAULT_BODY_LIMIT, REDACT_PATHS, type ServerOptions } from './app.js';
export { Metrics, METRICS_CONTENT_TYPE } from './metrics.js';
export { PROBLEM_CONTENT_TYPE, problemTitle, problemType, toProblem, type Problem } from './problem.js';
export {
  authenticate,
  type ExecutorPrincipal,
  type Principal,
  type Role,
  type TokenPrincipal,
} from './auth.js';
export { createToken, verifyToken, type CreatedToken } from './tokens.js';
export { openBaton, type OpenedBaton, type StoreChoice } from './open.js';
